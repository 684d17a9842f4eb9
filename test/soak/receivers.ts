import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * The soak's webhook receivers: real HTTP servers on 127.0.0.1 (a port each), one per endpoint,
 * that answer as a merchant's receiver might: always 2xx, 503 for a few seconds now and then,
 * hang past the delivery timeout now and then, flap between up and down every second, or 410
 * Gone. Every request is recorded (when, the webhook-id, what was answered) and verified with the
 * endpoint's secret by the `standardwebhooks` package, as a merchant's receiver would; bodies are
 * not kept, only a digest of an order event's texts, to compare with the stored order.
 */

export type Behaviour = 'ok' | 'outage' | 'hang' | 'flap' | 'gone';

/**
 * The windows of the failing behaviours, from the receiver's start: each is far shorter than the
 * retry schedule the soak gives the stage processes (options.ts, WEBHOOK_SCHEDULE), so none of
 * them is an outage that may disable an endpoint.
 */
export const WINDOWS = {
  /** 503 for OUTAGE.downMs of every OUTAGE.periodMs. */
  outage: { periodMs: 20_000, downMs: 5_000, offsetMs: 0 },
  /** No answer (past the delivery timeout) for downMs of every periodMs, half a period after the outages. */
  hang: { periodMs: 20_000, downMs: 4_000, offsetMs: 10_000 },
  /** Down one second, up the next. */
  flap: { periodMs: 2_000, downMs: 1_000, offsetMs: 0 },
} as const;

export type Hit = {
  /** When the request arrived, epoch ms. */
  at: number;
  webhookId: string;
  /** What the receiver answered; 'hung' when it never did. */
  answered: number | 'hung';
  /** Whether the signature verified with the endpoint's secret (standardwebhooks). */
  verified: boolean;
  type?: string;
  bytes: number;
  /** Of an order event: the order's texts as delivered (orderTextDigest). */
  digest?: string;
};

type OrderShape = {
  order_no?: unknown;
  customer?: { name?: unknown } | null;
  order_rows?: { product_name?: unknown; product_sku?: unknown; segment_slug?: unknown }[];
};

/** A digest of an order's texts (order_no, customer name, each row's name, SKU and segment), the same for the API shape and the stored item. */
export const orderTextDigest = (order: OrderShape) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        order.order_no,
        order.customer?.name ?? null,
        (order.order_rows ?? []).map((row) => [row.product_name, row.product_sku ?? null, row.segment_slug ?? null]),
      ]),
    )
    .digest('base64url');

const inWindow = (behaviour: 'outage' | 'hang' | 'flap', sinceStart: number) => {
  const window = WINDOWS[behaviour];
  return (sinceStart + window.offsetMs) % window.periodMs < window.downMs;
};

export class Receiver {
  readonly hits: Hit[] = [];
  /** Set once the endpoint is created: the receiver verifies with it. */
  secret: string | undefined;
  private readonly server: Server;
  /** When it started: its windows count from here. */
  readonly started = Date.now();
  private readonly unverified: { hit: Hit; body: string; headers: Record<string, string> }[] = [];
  url = '';

  constructor(
    readonly name: string,
    readonly behaviour: Behaviour,
  ) {
    this.server = createServer((request, response) => this.receive(request, response));
  }

  async start() {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/${this.name}`;
    return this;
  }

  /** Whether the receiver fails requests that arrive at `at` (epoch ms). */
  isDown(at: number) {
    if (this.behaviour === 'ok') return false;
    if (this.behaviour === 'gone') return true;
    return inWindow(this.behaviour, at - this.started);
  }

  private receive(request: IncomingMessage, response: ServerResponse) {
    const at = Date.now();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(request.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
      };
      const down = this.isDown(at);
      const answered: Hit['answered'] = !down ? 200 : this.behaviour === 'gone' ? 410 : this.behaviour === 'hang' ? 'hung' : 503;
      const hit: Hit = {
        at,
        webhookId: headers['webhook-id'],
        answered,
        verified: false,
        bytes: Buffer.byteLength(body),
        ...readEvent(body),
      };
      this.hits.push(hit);
      if (this.secret === undefined) this.unverified.push({ hit, body, headers });
      else hit.verified = verifies(this.secret, body, headers);
      if (answered === 'hung') return; // never answered: the deliverer's timeout ends it (close() drops the socket)
      response.writeHead(answered, { 'content-type': 'text/plain' }).end(answered === 200 ? 'ok' : 'not now');
    });
  }

  /** Verifies what arrived before the secret was known, stops listening and drops every connection (hung ones too). */
  async close() {
    for (const { hit, body, headers } of this.unverified.splice(0))
      hit.verified = this.secret !== undefined && verifies(this.secret, body, headers);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const verifies = (secret: string, body: string, headers: Record<string, string>) => {
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
};

/** The event's type, and the texts' digest of an order event. */
const readEvent = (body: string): Pick<Hit, 'type' | 'digest'> => {
  try {
    const event = JSON.parse(body) as { type?: unknown; data?: { order?: OrderShape } };
    const type = typeof event.type === 'string' ? event.type : undefined;
    const order = event.data?.order;
    return { ...(type ? { type } : {}), ...(order ? { digest: orderTextDigest(order) } : {}) };
  } catch {
    return {};
  }
};
