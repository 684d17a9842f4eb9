/**
 * A webhook receiver: verifies each delivery with the `standardwebhooks` package, prints the event,
 * answers 204. WEBHOOK_SECRET is the endpoint's `secret` (shown on create and rotate-secret).
 *   WEBHOOK_SECRET=whsec_... PORT=4000 npx tsx examples/webhook-receiver.ts
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET ?? '');

createServer(async (request, response) => {
  let body = '';
  for await (const chunk of request) body += chunk;
  try {
    const event = webhook.verify(body, request.headers as Record<string, string>) as { type: string };
    console.log(request.headers['webhook-id'], event.type, JSON.stringify(event));
    response.writeHead(204).end(); // any 2xx within 15 s: received (deduplicate on webhook-id)
  } catch {
    response.writeHead(400).end(); // not signed by our secret: ignore it
  }
}).listen(Number(process.env.PORT ?? 4000), '127.0.0.1');
