/** What the bench's parts share: a fresh quiet local stack, order creates over HTTP and a client that meters read units. */

import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { InitializeMiddleware, MetadataBearer } from '@smithy/types';
import { localClientConfig } from '#local/aws-env';
import { freePorts } from '#local/ports';
import { type LocalStack, startLocalStack } from '#local/stack';
import type { FixtureMerchant } from '#shared/admin/fixture';
import { seedFixture } from '#shared/admin/seed';
import type { Store } from '#shared/admin/store';
import { UNMETERED_QUOTA_ENV } from '#shared/quota/policy';

export type Print = (line: string) => void;

/** A merchant of the benches' fixtures: one live token, one active affiliate, `alice`. */
export const benchMerchant = (key: string, name: string) => ({
  key,
  name,
  currency: 'EUR',
  tokens: [{ key: 'live', kind: 'live' as const }],
  affiliates: [{ slug: 'alice', name: 'Alice', email: 'alice@example.com', status: 'active' as const }],
});

/** An order of the benches' seeded fixtures: two rows, one of 5,000 customers. */
export const fixtureOrder = (prefix: string, index: number, affiliateSlug = 'alice') => ({
  order_no: `${prefix}-${index}`,
  affiliate_slug: affiliateSlug,
  currency_code: 'EUR',
  total_shipping_value: 495,
  customer: { name: `Customer ${index % 5000}`, email: `customer-${index % 5000}@example.com` },
  order_rows: [
    { product_sku: `SKU-${index % 50}`, product_name: 'Tent', price_value: 19900, tax_value: 3980, quantity: 1 },
    { product_name: 'Pegs', price_value: 990, quantity: 2 },
  ],
});

/** A create's body for the latency benches: one row, a fresh order number. */
export const freshCreateBody = (prefix: string) => ({
  affiliate_slug: 'alice',
  order_no: `${prefix}-${randomUUID()}`,
  total_shipping_value: 495,
  currency_code: 'EUR',
  customer: { name: 'Dan Doe', email: 'dan@example.com' },
  order_rows: [{ product_name: 'Tent', product_sku: 'TENT-2P', price_value: 19900, tax_value: 3781, quantity: 1 }],
});

/** A markdown table, its head given as its columns joined by ' | ': the one renderer of every table the bench prints. */
export const printTable = (print: Print, head: string, rows: (string | number)[][]) => {
  print(`| ${head} |`);
  print(`|${'---|'.repeat(head.split(' | ').length)}`);
  for (const row of rows) print(`| ${row.join(' | ')} |`);
};

/** The commit a bench runs on (short hash, '' when git cannot say) and whether tracked files have uncommitted changes. */
export const benchCommit = (): { commit: string; dirty: boolean } => {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  return { commit: git('rev-parse', '--short', 'HEAD'), dirty: git('status', '--porcelain', '--untracked-files=no') !== '' };
};

/** One HTTP answer as the benches keep it: its status (or `error` when none came), its time, its body. */
export type Reply = { status: number | 'error'; ms: number; body?: unknown };

/** One keep-alive agent without a socket cap, so a burst of 500 is 500 requests in flight. */
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** Closes the sockets the agent keeps alive: before the stack they talk to stops. */
export const closeConnections = () => agent.destroy();

type Send = { method?: 'GET' | 'POST' | 'PATCH' | 'DELETE'; body?: unknown; idempotencyKey?: string };

/** One request, timed; one that lost Node's keep-alive race (ECONNRESET on a reused socket) is sent once more, else an `error` reply. */
export const send = (url: string, token: string, { method = 'GET', body, idempotencyKey }: Send = {}, resent = false): Promise<Reply> =>
  new Promise<Reply>((resolve) => {
    const start = performance.now();
    const failed = () => resolve({ status: 'error', ms: performance.now() - start });
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = {
      Authorization: `Bearer ${token}`,
      Accept: 'application/json',
      ...(payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }),
      ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
    };
    const req = http.request(url, { method, agent, timeout: 120_000, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const ms = performance.now() - start;
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 'error', ms, body: parsed });
      });
      res.on('error', failed);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!resent && req.reusedSocket && error.code === 'ECONNRESET') resolve(send(url, token, { method, body, idempotencyKey }, true));
      else failed();
    });
    if (payload !== undefined) req.write(payload);
    req.end();
  });

export const sum = <T>(items: readonly T[], of: (item: T) => number) => items.reduce((total, item) => total + of(item), 0);

export const mean = (values: readonly number[]) => sum(values, (value) => value) / Math.max(1, values.length);

/** The replies by status, e.g. `3 x 201, 1 x 503`. */
export const statusCount = (replies: readonly Reply[]) => {
  const byStatus = new Map<string, number>();
  for (const reply of replies) byStatus.set(String(reply.status), (byStatus.get(String(reply.status)) ?? 0) + 1);
  return [...byStatus]
    .sort()
    .map(([status, n]) => `${n} x ${status}`)
    .join(', ');
};

/** A fresh in-memory local stack on free ports; `workerEnv` adds to its stage processes' environment. */
export const startBenchStack = async (workerEnv: Record<string, string> = {}) =>
  startLocalStack({
    ports: await freePorts(),
    seedDemo: false,
    workerEnv: { ...UNMETERED_QUOTA_ENV, POWERTOOLS_LOG_LEVEL: 'ERROR', ...workerEnv },
  });

/** Runs `run` on a fresh bench stack (startBenchStack) and stops the stack after it. */
export const onBenchStack = async <T>(workerEnv: Record<string, string>, run: (stack: LocalStack) => Promise<T>) => {
  const stack = await startBenchStack(workerEnv);
  try {
    return await run(stack);
  } finally {
    await stack.stop();
  }
};

/** Seeds the merchants on the stack's live stage; then each one's id and live token by its key. */
export const seedMerchants = async (stack: LocalStack, merchants: FixtureMerchant[]) => {
  const { merchants: seeded } = await seedFixture(stack.stages.live.store, 'live', { merchants });
  return (key: string) => ({ id: seeded[key]?.id ?? '', token: seeded[key]?.tokens.live ?? '' });
};

/** Sends `send(index)` for each index below `count` at `rate` a second, on schedule; the seconds until all were answered. */
export const atRate = async (rate: number, count: number, send: (index: number) => Promise<unknown>) => {
  const started = performance.now();
  const pending: Promise<unknown>[] = [];
  for (let index = 0; index < count; index++) {
    const wait = started + (index * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(send(index));
  }
  await Promise.all(pending);
  return (performance.now() - started) / 1000;
};

/** Runs `jobs` with at most `concurrency` in flight; their answers in order. */
export const pool = async <T>(jobs: (() => Promise<T>)[], concurrency: number): Promise<T[]> => {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, jobs.length) }, async () => {
      while (next < jobs.length) {
        const index = next++;
        results[index] = await (jobs[index] as () => Promise<T>)();
      }
    }),
  );
  return results;
};

/** Creates the orders over HTTP, `concurrency` at a time, each sent again while answered 503; `answered` hears each at its 201. */
export const createOrders = async <T extends { order_no: string }>(
  base: string,
  token: string,
  bodies: readonly T[],
  concurrency: number,
  answered: (body: T) => void,
) => {
  await pool(
    bodies.map((body) => async () => {
      for (;;) {
        const { status } = await send(`${base}/api/v2/orders/create`, token, { method: 'POST', body });
        if (status === 201) break;
        if (status !== 503) throw new Error(`create answered ${status}`);
      }
      answered(body);
    }),
    concurrency,
  );
};

type MeteredCall = { command: string; index: string | undefined; units: number };

export const sumUnits = (calls: readonly MeteredCall[]) => calls.reduce((total, call) => total + call.units, 0);

/** A store on the emulator that meters its calls: `measure(run)` returns what `run` returned, its calls (command, index, units) and their sum. */
export const meteredStore = (endpoint: string, table: string) => {
  const calls: MeteredCall[] = [];
  const client = new DynamoDBClient({ endpoint, ...localClientConfig });
  const meter: InitializeMiddleware<object, MetadataBearer> = (next, context) => async (args) => {
    const input = args.input as { ReturnConsumedCapacity?: string; IndexName?: string };
    input.ReturnConsumedCapacity = 'TOTAL';
    const result = await next(args);
    const units = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? Number.NaN;
    calls.push({ command: context.commandName ?? '?', index: input.IndexName, units });
    return result;
  };
  client.middlewareStack.add(meter, { step: 'initialize', name: 'benchReadMeter', priority: 'high' });
  const store: Store = { ddb: DynamoDBDocumentClient.from(client), table };
  return async <T>(run: (store: Store) => Promise<T>) => {
    calls.length = 0;
    const value = await run(store);
    return { value, calls: [...calls], rcu: sumUnits(calls) };
  };
};
