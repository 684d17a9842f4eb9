import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { DEMO } from './demo';

/**
 * `GET /openapi.json` and the API reference at `GET /docs` on every local stage, without a token.
 * The page is Swagger UI, served from the swagger-ui-dist package in node_modules (no CDN: these
 * machines are offline). The document is the committed openapi.json with this stage as its first
 * server, so "Try it out" calls the local stage; the deployed stages do not serve it (README,
 * "The contract").
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
const asset = (name: string) => {
  let content = cache.get(name);
  if (!content) {
    content = readFileSync(join(SWAGGER_DIR, name));
    cache.set(name, content);
  }
  return content;
};

const reply = (response: ServerResponse, status: number, contentType: string, body: string | Buffer) => {
  response
    .writeHead(status, { 'content-type': contentType, 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-cache' })
    .end(body);
};

/**
 * The document as this stage serves it: this stage first among the servers, in place of the
 * committed document's templated local server (http://127.0.0.1:{port}), so "Try it out" calls it.
 */
export const localDocument = (stage: string, host: string | undefined) => {
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

export const DOCS_PATHS = ['/openapi.json', '/docs', '/docs/'] as const;

/** Answers the contract's paths; false for any other request (the API's own routes). */
export const serveDocs = (request: IncomingMessage, path: string, response: ServerResponse, stage: string): boolean => {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (path === '/openapi.json') {
    reply(response, 200, 'application/json', JSON.stringify(localDocument(stage, request.headers.host)));
    return true;
  }
  if (path === '/docs' || path === '/docs/') {
    reply(response, 200, 'text/html; charset=utf-8', PAGE);
    return true;
  }
  if (path === '/docs/init.js') {
    reply(response, 200, 'text/javascript; charset=utf-8', INIT);
    return true;
  }
  const name = path.startsWith('/docs/') ? path.slice('/docs/'.length) : undefined;
  const type = name !== undefined && Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (name === undefined || type === undefined) return false;
  reply(response, 200, type, asset(name));
  return true;
};
