/** Webhook delivery latency, alone and beside hanging endpoints (docs/contributing.md#how-each-part-measures). */

import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { atRate, benchMerchant, onBenchStack, type Print, printTable, seedMerchants, send, sum } from './local';
import { p50p99 } from './percentile';

/** 40 changes a second: at 100 the emulators take both cores of a 2-core machine, so neighbours would show as CPU queueing. */
export const WEBHOOK_BENCH = { rate: 40, seconds: 20, settleMs: 20_000, orders: 200, noisyMerchants: 5, noisyRate: 4 } as const;

/** 40 endpoints of 20 merchants, more than the stage's 50 deliverers can hold two at a time, with about the same traffic. */
export const WEBHOOK_BENCH_MANY_HANGING = { noisyMerchants: 20, noisyRate: 1 } as const;

/** A phase's figures: changes sent, answered 200 (created) and delivered, with each delivered change's latency (ms). */
const phaseResult = (label: string, latencies: number[], counts: { sent: number; created: number; rate: number }) => ({
  label,
  latencies,
  ...counts,
  delivered: latencies.length,
  ...p50p99(latencies),
});

export type WebhookBenchResult = ReturnType<typeof phaseResult>;

/** A receiver on 127.0.0.1 that notes when each order change's event arrived (by order and shipping value); `hang` never answers, else 204. */
export const receiver = async (hang: boolean) => {
  const arrived = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      try {
        const order = (JSON.parse(body) as { data?: { order?: { uuid?: string; total_shipping_value?: number } } }).data?.order;
        const key = `${order?.uuid}:${order?.total_shipping_value}`;
        if (order && !arrived.has(key)) arrived.set(key, performance.now());
      } catch {
        // not an order event
      }
      if (!hang) response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, arrived, server };
};

/** Re-prices the orders' shipping in turn at `rate` per second for `seconds` (values from `firstValue` on); the send time of each change answered 200. */
const patchAtRate = async (base: string, token: string, orders: readonly string[], firstValue: number, rate: number, seconds: number) => {
  const sentAt = new Map<string, number>();
  const total = rate * seconds;
  const took = await atRate(rate, total, (index) => {
    const uuid = orders[index % orders.length] as string;
    const value = firstValue + index;
    const sent = performance.now();
    return send(`${base}/api/v2/orders/${uuid}`, token, { method: 'PATCH', body: { total_shipping_value: value } }).then((reply) => {
      if (reply.status === 200) sentAt.set(`${uuid}:${value}`, sent);
    });
  });
  return { sentAt, total, rate: total / took };
};

/** A webhook endpoint of the token's merchant at `url`, subscribed to `events`; its uuid. */
export const createEndpoint = async (base: string, token: string, url: string, events: readonly string[] = ['order.updated']) => {
  const reply = await send(`${base}/api/v2/webhooks`, token, { method: 'POST', body: { url, events } });
  if (reply.status !== 201) throw new Error(`creating a webhook endpoint answered ${reply.status}`);
  return (reply.body as { data: { webhook: { uuid: string } } }).data.webhook.uuid;
};

const deleteEndpoint = async (base: string, token: string, uuid: string) => {
  const { status } = await send(`${base}/api/v2/webhooks/${uuid}`, token, { method: 'DELETE' });
  if (status !== 200) throw new Error(`deleting a webhook endpoint answered ${status}`);
};

/** Waits (at most a minute) until the server holds no connection: a hanging receiver's last attempts have run into their timeout. */
const idle = async (server: Server) => {
  const deadline = performance.now() + 60_000;
  const open = () => new Promise<number>((resolve) => server.getConnections((_, count) => resolve(count)));
  while (performance.now() < deadline && (await open()) > 0) await sleep(250);
};

/** Two endpoints at `url` for each merchant; deletes them when called. */
const noisyEndpoints = async (base: string, tokens: readonly string[], url: string) => {
  const created: { token: string; uuid: string }[] = [];
  for (const token of tokens)
    for (let endpoint = 0; endpoint < 2; endpoint++) created.push({ token, uuid: await createEndpoint(base, token, url) });
  return async () => {
    for (const { token, uuid } of created) await deleteEndpoint(base, token, uuid);
  };
};

/** A seeded merchant with `count` orders (seeded orders announce nothing: only the changes make events). */
const hooksMerchant = (key: string, orders: readonly string[]) => ({
  ...benchMerchant(key, `Webhook bench ${key}`),
  orders: orders.map((uuid, index) => ({
    key: `o${index}`,
    uuid,
    order_no: `WH-${key}-${index}`,
    affiliate_slug: 'alice',
    currency_code: 'EUR',
    total_shipping_value: 0,
    order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: 1 }],
  })),
});

/** The phases' table, with both alone phases pooled as the baseline, and each comparison against it; returns the figures. */
const summarize = (print: Print, results: readonly WebhookBenchResult[], hangingHits: number) => {
  const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : 'n/a');
  const [first, beside, answered, hung, again] = results as [WebhookBenchResult, ...WebhookBenchResult[]];
  const pooled = [first, again].flatMap((row) => (row ? [row] : []));
  const aloneLatencies = pooled.flatMap((row) => row.latencies);
  const alone = phaseResult('healthy endpoint alone (both alone phases pooled)', aloneLatencies, {
    sent: sum(pooled, (row) => row.sent),
    created: sum(pooled, (row) => row.created),
    rate: sum(pooled, (row) => row.rate) / Math.max(1, pooled.length),
  });
  printTable(
    print,
    'phase | changes sent | answered 200 | delivered to the healthy endpoint | send rate (/s) | p50 | p99',
    [...results, alone].map((row) => [row.label, row.sent, row.created, row.delivered, row.rate.toFixed(1), ms(row.p50), ms(row.p99)]),
  );
  for (const row of [beside, hung]) if (row) print(`\n${row.label}: p99 ${(row.p99 / alone.p99).toFixed(2)}x its p99 alone.`);
  if (answered && hung)
    print(
      `\nTheir endpoints hanging rather than answering: p99 ${(hung.p99 / answered.p99).toFixed(2)}x (the same traffic, the same CPU).`,
    );
  print(`\nThe hanging endpoints received ${hangingHits} distinct events' attempts in all.`);
  return { alone, beside, answered, hung };
};

/** Runs the phases and prints their table; returns the figures (the bench's summary reads them). */
export const benchWebhooks = async (print: Print = console.log, options: Partial<Record<keyof typeof WEBHOOK_BENCH, number>> = {}) => {
  const { rate, seconds, settleMs, orders: orderCount, noisyMerchants, noisyRate } = { ...WEBHOOK_BENCH, ...options };
  print(
    `\n## Webhook delivery (${rate} events/s for ${seconds} s per phase; ${new Date().toISOString()})\n\nLatency from sending a change of an order (a shipping re-price) to its \`order.updated\` arriving at a healthy endpoint on loopback: alone, beside a second endpoint of the same merchant that never answers (15 s timeout per attempt), and beside ${noisyMerchants * 2} endpoints of ${noisyMerchants} other merchants (two each, their orders re-priced at ${noisyRate}/s each) that answer, then that never answer. The stage has 50 deliverers for endpoints that answer promptly and 20 on the slow lane for the others.\n`,
  );
  const orders = Array.from({ length: orderCount }, () => randomUUID());
  const noisyOrders = Array.from({ length: noisyMerchants }, () => Array.from({ length: 20 }, () => randomUUID()));
  return onBenchStack({ CONSUMER_POLL: 'off' }, async (stack) => {
    const servers: Server[] = [];
    const listening = async (hang: boolean) => {
      const listener = await receiver(hang);
      servers.push(listener.server);
      return listener;
    };
    try {
      const merchant = await seedMerchants(stack, [
        hooksMerchant('hooks', orders),
        ...noisyOrders.map((list, index) => hooksMerchant(`noisy${index}`, list)),
      ]);
      const token = merchant('hooks').token;
      const base = stack.stages.live.url;
      const healthy = await listening(false);
      await createEndpoint(base, token, healthy.url);

      const results: WebhookBenchResult[] = [];
      /** Its changes beside `beside`, measured once each has arrived at the healthy receiver (or `settleMs` passed). */
      const phase = async (label: string, firstValue: number, beside: () => Promise<unknown> = async () => undefined) => {
        const [{ sentAt, total, rate: sentRate }] = await Promise.all([
          patchAtRate(base, token, orders, firstValue, rate, seconds),
          beside(),
        ]);
        const deadline = performance.now() + settleMs;
        while (performance.now() < deadline && [...sentAt.keys()].some((key) => !healthy.arrived.has(key))) await sleep(250);
        const latencies = [...sentAt].flatMap(([key, sent]) =>
          healthy.arrived.has(key) ? [(healthy.arrived.get(key) as number) - sent] : [],
        );
        results.push(phaseResult(label, latencies, { sent: total, created: sentAt.size, rate: sentRate }));
      };
      // Warm-up (not reported): DynamoDB Local's JVM compiles its hot paths over its first thousands of requests.
      await phase('warm-up', 1);
      results.shift();
      await phase('healthy endpoint alone', 1 + rate * seconds);
      const hanging = await listening(true);
      const ownHanging = await createEndpoint(base, token, hanging.url);
      await phase('healthy endpoint, beside one of its merchant that hangs', 1 + 2 * rate * seconds);
      // Its backlog is dropped (the endpoint is gone), so the last phases measure the other merchants' endpoints only.
      await deleteEndpoint(base, token, ownHanging);
      await idle(hanging.server);
      const noisyTokens = noisyOrders.map((_, index) => merchant(`noisy${index}`).token);
      const noisyTraffic = (firstValue: number) => () =>
        Promise.all(
          noisyOrders.map((list, index) => patchAtRate(base, noisyTokens[index] as string, list, firstValue, noisyRate, seconds)),
        );
      const noisy = `${noisyMerchants * 2} of ${noisyMerchants} other merchants`;
      // The same neighbours' traffic to endpoints that answer: what their load alone costs the healthy endpoint (CPU shared with the emulators).
      const deleteAnswering = await noisyEndpoints(base, noisyTokens, (await listening(false)).url);
      await phase(`healthy endpoint, beside ${noisy} that answer`, 1 + 3 * rate * seconds, noisyTraffic(1));
      await deleteAnswering();
      const deleteHanging = await noisyEndpoints(base, noisyTokens, hanging.url);
      await phase(`healthy endpoint, beside ${noisy} that hang`, 1 + 4 * rate * seconds, noisyTraffic(1 + noisyRate * seconds));
      await deleteHanging();
      // Their attempts in flight end first: alone again means with no neighbour's work left.
      await idle(hanging.server);
      await phase('healthy endpoint alone, again', 1 + 5 * rate * seconds);

      return summarize(print, results, hanging.arrived.size);
    } finally {
      for (const server of servers) {
        server.closeAllConnections();
        server.close();
      }
    }
  });
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await benchWebhooks();
