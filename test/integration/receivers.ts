import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll } from 'vitest';

/** What a receiver on loopback got: each request's headers and body, in order. */
export type Hit = { headers: IncomingMessage['headers']; body: string; at: number };

const servers: Server[] = [];
afterAll(async () => {
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A webhook receiver on 127.0.0.1, closed after the file's tests: `answer` decides each response by its index (and may never answer). */
export const receiver = async (answer: (index: number, response: ServerResponse) => void = (_, response) => response.end('ok')) => {
  const hits: Hit[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      hits.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      answer(hits.length - 1, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, hits };
};

/** The Standard Webhooks headers of a hit. */
export const signed = (hit: Hit) => ({
  'webhook-id': String(hit.headers['webhook-id']),
  'webhook-timestamp': String(hit.headers['webhook-timestamp']),
  'webhook-signature': String(hit.headers['webhook-signature']),
});

/** The verified payload of a hit (throws when the signature does not verify with `secret`). */
export const verified = <T = { type: string; data: Record<string, any> }>(secret: string, hit: Hit): T =>
  new Webhook(secret).verify(hit.body, signed(hit)) as T;
