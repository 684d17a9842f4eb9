import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { inject } from 'vitest';
import { localClientConfig, useLocalAwsEnv } from '#local/aws-env';
import type { FixtureMerchant } from '#shared/admin/fixture';
import { parseFixture } from '#shared/admin/fixture';
import { type SeededMerchant, seedFixture } from '#shared/admin/seed';
import { createStore, type Store } from '#shared/admin/store';
import type { Stage } from '#shared/config';
import { assertDocumented } from './contract';
import './stack-info';

useLocalAwsEnv();

export const stack = inject('stack');

export const storeFor = (stage: Stage): Store => createStore(stack.stages[stage].table, stack.endpoints.dynamodb);

/**
 * A merchant of its own for one test file: unique order numbers and slugs never collide with
 * another file's. Tokens: `live` (live), `no_orders` (live, no live orders), `test` (testing).
 */
export const merchantFixture = (overrides: Partial<FixtureMerchant> = {}): FixtureMerchant => ({
  key: 'm',
  name: `Merchant ${randomUUID().slice(0, 8)}`,
  currency: 'EUR',
  users: [{ email: 'owner@merchant.example', name: 'Olivia Owner' }],
  tokens: [
    { key: 'live', kind: 'live' },
    { key: 'no_orders', kind: 'live', can_place_live_orders: false },
    { key: 'test', kind: 'testing' },
  ],
  tiers: [{ slug: 'gold', name: 'Gold', description: 'Top partners' }],
  affiliates: [
    { slug: 'alice', name: 'Alice', email: 'alice@example.com', tier: 'gold', status: 'active' },
    { slug: 'ivan', name: 'Ivan', email: 'ivan@example.com', status: 'inactive' },
  ],
  ...overrides,
});

/** Seeds merchants (fixture format) into a stage's table; returns what the seed printed. */
export const seed = async (merchants: FixtureMerchant[], stage: Stage = 'live') =>
  (await seedFixture(storeFor(stage), stage, parseFixture({ merchants }))).merchants;

export const seedOne = async (merchant: FixtureMerchant = merchantFixture(), stage: Stage = 'live'): Promise<SeededMerchant> =>
  (await seed([merchant], stage))[merchant.key] as SeededMerchant;

export type Response<T = any> = { status: number; body: T; headers: Headers };

/** An HTTP client for one stage of the local stack, optionally with a bearer token. */
export const api = (stage: Stage, token?: string) => {
  const request = async (method: string, path: string, body?: unknown, raw?: string): Promise<Response> => {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined || raw !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${stack.stages[stage].url}${path}`, {
      method,
      headers,
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await response.text();
    const result = { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
    assertDocumented(method, path, result);
    return result;
  };
  return {
    get: (path: string) => request('GET', path),
    post: (path: string, body?: unknown) => request('POST', path, body),
    patch: (path: string, body?: unknown) => request('PATCH', path, body),
    delete: (path: string) => request('DELETE', path),
    raw: (method: string, path: string, raw: string) => request(method, path, undefined, raw),
  };
};

export const TRACE_ID = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z:api:[0-9a-f]{8}$/;

export const sqsClient = new SQSClient({ endpoint: stack.endpoints.sqs, useQueueUrlAsEndpoint: false, ...localClientConfig });

/** Receives and deletes everything currently on a queue; returns the parsed bodies. */
export const drainQueue = async (queueUrl: string): Promise<any[]> => {
  const bodies: any[] = [];
  for (;;) {
    const { Messages = [] } = await sqsClient.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (Messages.length === 0) return bodies;
    bodies.push(...Messages.map((message) => JSON.parse(message.Body ?? 'null')));
    await sqsClient.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
      }),
    );
  }
};

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export const eventually = async <T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** The e-mails the SES emulator has received (its /store API). */
export const sentEmails = async (): Promise<
  { messageId: string; from: string; destination: { to: string[] }; subject: string; body: { text?: string; html?: string }; at: number }[]
> => ((await (await fetch(`${stack.endpoints.ses}/store`)).json()) as { emails: any[] }).emails;

/** A valid order creation body; override any field. */
export const orderBody = (overrides: Record<string, unknown> = {}) => ({
  affiliate_slug: 'alice',
  order_no: `ORD-${randomUUID()}`,
  total_shipping_value: 495,
  currency_code: 'EUR',
  customer: { name: 'Dan Doe', email: 'dan@example.com' },
  order_rows: [{ product_name: 'Tent', product_sku: 'TENT-2P', price_value: 19900, tax_value: 3781, quantity: 1 }],
  ...overrides,
});
