import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { escapeHtml } from '#shared/mail/messages';
import { DEMO } from './demo';

/**
 * `GET /openapi.json` and the API reference at `GET /docs` on every local stage, without a token (docs/openapi.md),
 * and the local invitation link. Swagger UI is served from node_modules, not a CDN: these machines are offline.
 */

const require = createRequire(import.meta.url);
const SWAGGER_DIR = (require('swagger-ui-dist') as { getAbsoluteFSPath: () => string }).getAbsoluteFSPath();
const DOCUMENT_PATH = resolve(import.meta.dirname, '..', 'openapi.json');

/** The files of the page, by their name under /docs/. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Affiliate Program Merchant API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/** Every tag open, so every operation is on the page; no outbound validator badge (offline). */
const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#reference',
  docExpansion: 'list',
  deepLinking: true,
  displayOperationId: true,
  persistAuthorization: true,
  validatorUrl: null,
});
`;

const cache = new Map<string, Buffer>();
const asset = (name: string) => cache.get(name) ?? (cache.set(name, readFileSync(join(SWAGGER_DIR, name))).get(name) as Buffer);

/**
 * The document as this stage serves it: this stage first among the servers, in place of the
 * committed document's templated local server (http://127.0.0.1:{port}), so "Try it out" calls it.
 */
const localDocument = (stage: string, host: string | undefined) => {
  const document = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8')) as {
    servers: { url: string }[];
    components: { securitySchemes: { bearerToken: { description: string } } };
  };
  const local = host ? [{ url: `http://${host}`, description: `This local ${stage} stage (npm start).` }] : [];
  const { bearerToken } = document.components.securitySchemes;
  const demoToken = stage === 'sandbox' ? DEMO.tokens.sandbox : DEMO.tokens.live;
  bearerToken.description = `${bearerToken.description} On this local stage the demo merchant's token is \`${demoToken}\`.`;
  return { ...document, servers: [...local, ...document.servers.filter((server) => server.url !== 'http://127.0.0.1:{port}')] };
};

const INVITATION_PATH = /^\/invitations\/([0-9a-f-]{36})$/;

/** The local stand-in for the merchant dashboard's invitation page, where the local invitation e-mails link (localInviteLinkBase). */
const invitationPage = (uuid: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Invitation ${escapeHtml(uuid)} (local)</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.5">
  <h1>Invitation link (local stand-in)</h1>
  <p>This is where an invited affiliate lands. Deployed, the link opens the merchant dashboard's
  invitation page (<code>inviteLinkBaseUrl</code>), which is not part of this API.</p>
  <p>Invitation <code>${escapeHtml(uuid)}</code>. To record that the link was used, as the dashboard does:</p>
  <pre>npm run --silent admin -- mark-invite-used --merchant &lt;merchant id&gt; --invite ${escapeHtml(uuid)}</pre>
  <p>The invitation's <code>link_used_at</code> is then set in <code>GET /api/v2/affiliates/invites</code>.</p>
</body>
</html>
`;

/** The contract's pages and the local invitation page as [content type, body]; undefined for any other request (the API's own routes). */
export const docsPage = (request: IncomingMessage, path: string, stage: string): [string, string | Buffer] | undefined => {
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
  const invitation = INVITATION_PATH.exec(path);
  const name = path.startsWith('/docs/') ? path.slice('/docs/'.length) : '';
  if (invitation) return ['text/html; charset=utf-8', invitationPage(invitation[1] as string)];
  if (path === '/openapi.json') return ['application/json', JSON.stringify(localDocument(stage, request.headers.host))];
  if (path === '/docs' || path === '/docs/') return ['text/html; charset=utf-8', PAGE];
  if (path === '/docs/init.js') return ['text/javascript; charset=utf-8', INIT];
  if (Object.hasOwn(ASSETS, name)) return [ASSETS[name] as string, asset(name)];
  return undefined;
};
