import type { IncomingMessage, ServerResponse } from 'node:http';
import { paginateScan } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { functionTable } from '#shared/db/client';
import { merchantIdOf } from '#shared/db/entities/base';
import { parseWebhookEndpoint } from '#shared/db/entities/webhook-endpoint';
import { escapeHtml } from '#shared/mail/messages';
import { openSecret } from '#shared/webhooks/secret-box';
import { send } from './http';

/** The local webhook inbox: verifies deliveries as a merchant's receiver would and shows them (docs/webhooks.md; `?format=json` for tools). */
const PREFIX = '/webhook-inbox';
const KEPT = 200;
const MAX_BODY = 1024 * 1024;

type Received = {
  received_at: string;
  path: string;
  webhook_id: string | undefined;
  type: string | undefined;
  endpoint_uuid: string | undefined;
  verified: boolean;
  note: string;
  answered: number;
  body: string;
};

const received: Received[] = [];

/** The endpoints of this stage whose URL is this inbox path (a local table: a Scan, every page of it, is fine here). */
const endpointsAt = async (path: string) => {
  const items: Record<string, unknown>[] = [];
  const pages = paginateScan(
    { client: functionTable.ddb },
    {
      TableName: functionTable.table,
      FilterExpression: '#type = :type',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':type': 'webhook_endpoint' },
    },
  );
  for await (const page of pages) items.push(...(page.Items ?? []));
  return items.filter((item) => {
    try {
      const url = new URL(String(item.url));
      return `${url.pathname}${url.search}` === path;
    } catch {
      return false;
    }
  });
};

type Check = Pick<Received, 'verified' | 'note' | 'endpoint_uuid'>;

/** The endpoints last found at each inbox path: a Scan for every delivery would grow with the table and slow the whole stage. */
const known = new Map<string, Record<string, unknown>[]>();

/** Verified with the endpoints known at the path, else with those a fresh Scan finds (a new endpoint, a rotated secret). */
const verify = async (path: string, headers: IncomingMessage['headers'], body: string): Promise<Check> => {
  const cached = known.get(path);
  if (cached) {
    const check = await verifyWith(cached, headers, body);
    if (check.verified) return check;
  }
  const stored = await endpointsAt(path);
  known.set(path, stored);
  return verifyWith(stored, headers, body);
};

const verifyWith = async (stored: Record<string, unknown>[], headers: IncomingMessage['headers'], body: string): Promise<Check> => {
  if (stored.length === 0) return { verified: false, note: 'no endpoint of this stage has this URL', endpoint_uuid: undefined };
  const signed = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [name, String(headers[name] ?? '')]),
  );
  for (const item of stored) {
    const endpoint = parseWebhookEndpoint(item);
    const merchantId = merchantIdOf(String(item.pk));
    const secret = await openSecret(endpoint.secret_box, merchantId, endpoint.uuid);
    try {
      new Webhook(secret).verify(body, signed);
      return { verified: true, note: 'signature verified', endpoint_uuid: endpoint.uuid };
    } catch (error) {
      if (stored.length === 1) return { verified: false, note: (error as Error).message, endpoint_uuid: endpoint.uuid };
    }
  }
  return { verified: false, note: 'no endpoint with this URL signed it', endpoint_uuid: undefined };
};

const readBody = async (request: IncomingMessage) => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY) chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
};

const page = () => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="2"><title>Local webhook inbox</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}td,th{padding:.3rem .6rem;vertical-align:top;text-align:left}pre{margin:0;max-width:60rem;white-space:pre-wrap}.ok{color:#070}.bad{color:#b00}</style></head>
<body><h1>Local webhook inbox</h1>
<p>Point a webhook endpoint at <code>http://127.0.0.1:&lt;this port&gt;${PREFIX}/&lt;any name&gt;</code>; add <code>?fail=503</code> to answer with that status. Newest first, last ${KEPT}.</p>
<table><tr><th>Received</th><th>Path</th><th>Event</th><th>Signature</th><th>Answered</th><th>Body</th></tr>
${received
  .map(
    (entry) =>
      `<tr><td>${escapeHtml(entry.received_at)}</td><td>${escapeHtml(entry.path)}</td><td>${escapeHtml(entry.type ?? '')}<br><small>${escapeHtml(entry.webhook_id ?? '')}</small></td><td class="${entry.verified ? 'ok' : 'bad'}">${escapeHtml(entry.note)}</td><td>${entry.answered}</td><td><pre>${escapeHtml(entry.body)}</pre></td></tr>`,
  )
  .join('\n')}
</table></body></html>`;

/** Answers the inbox's requests (true), or leaves the request to the API (false). */
export const serveWebhookInbox = async (request: IncomingMessage, url: URL, response: ServerResponse): Promise<boolean> => {
  if (url.pathname !== PREFIX && !url.pathname.startsWith(`${PREFIX}/`)) return false;
  if (request.method === 'GET' && url.pathname === PREFIX) {
    request.resume();
    if (url.searchParams.get('format') === 'json') send(response, 200, JSON.stringify({ deliveries: received }));
    else send(response, 200, page(), { 'content-type': 'text/html; charset=utf-8' });
    return true;
  }
  if (request.method !== 'POST') {
    request.resume();
    send(response, 405, JSON.stringify({ message: 'The webhook inbox takes POST (deliveries) and GET /webhook-inbox.' }));
    return true;
  }
  const body = await readBody(request);
  const path = `${url.pathname}${url.search}`;
  const fail = Number(url.searchParams.get('fail'));
  const answered = Number.isInteger(fail) && fail >= 200 && fail <= 599 ? fail : 200;
  let type: string | undefined;
  try {
    type = (JSON.parse(body) as { type?: string }).type;
  } catch {
    type = undefined;
  }
  const check = await verify(path, request.headers, body).catch((error: unknown) => ({
    verified: false,
    note: `not verified: ${(error as Error).message}`,
    endpoint_uuid: undefined,
  }));
  received.unshift({
    received_at: new Date().toISOString(),
    path,
    webhook_id: request.headers['webhook-id'] as string | undefined,
    type,
    answered,
    body,
    ...check,
  });
  received.length = Math.min(received.length, KEPT);
  send(response, answered, JSON.stringify({ received: true, verified: check.verified }));
  return true;
};
