/** The event log: a create's latency to the log, and a page's cost at 1,000 and N events (docs/contributing.md#how-each-part-measures). */

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from '#shared/admin/store';
import { batchPut } from '#shared/db/entities/batch';
import { eventLogItem, eventLogPage, eventPosition, LOG_START, type LogEntry } from '#shared/db/entities/event-log';
import { MAX_EXAMINED_PER_PAGE_VALUE } from '#shared/schemas/events';
import { benchMerchant, createOrders, freshCreateBody, meteredStore, onBenchStack, printTable, seedMerchants, send } from './local';
import { percentile } from './percentile';

const EVENTS_BENCH = { orders: 200, concurrency: 20, baseline: 1_000 };

const latency = async (base: string, token: string) => {
  const answered = new Map<string, number>();
  const seen = new Map<string, number>();
  let duplicates = 0;
  let cursor = '';
  let writing = true;
  const poller = (async () => {
    while (writing || seen.size < answered.size) {
      for (let more = true; more; ) {
        const reply = await send(`${base}/api/v2/events?limit=100${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`, token);
        if (reply.status !== 200) {
          // A busy local stack may answer 503: the consumer tries again from the same cursor.
          await sleep(100);
          continue;
        }
        const body = reply.body as {
          data: { type: string; data: { order: { order_no: string } } }[];
          meta: { next_cursor: string; has_more: boolean };
        };
        for (const event of body.data.filter((item) => item.type === 'order.created')) {
          if (seen.has(event.data.order.order_no)) duplicates++;
          else seen.set(event.data.order.order_no, performance.now());
        }
        ({ next_cursor: cursor, has_more: more } = body.meta);
      }
      await sleep(100);
    }
  })();
  await createOrders(
    base,
    token,
    Array.from({ length: EVENTS_BENCH.orders }, () => freshCreateBody('EV')),
    EVENTS_BENCH.concurrency,
    (body) => answered.set(body.order_no, performance.now()),
  );
  writing = false;
  await poller;
  const delays = [...answered].map(([orderNo, at]) => (seen.get(orderNo) ?? Number.NaN) - at);
  return [
    `${EVENTS_BENCH.orders} creates, ${EVENTS_BENCH.concurrency} at a time`,
    `${seen.size} of ${answered.size} seen, ${duplicates} twice`,
    ...[percentile(delays, 50), percentile(delays, 99), Math.max(...delays)].map((ms) => `${ms.toFixed(0)} ms`),
  ];
};

/** A realistic order.created event (one row), as the feed logs it. */
const sampleEntry = (index: number): LogEntry => {
  const uuid = randomUUID();
  const at = new Date(Date.UTC(2026, 10, 1) + index * 1000).toISOString();
  return {
    position: eventPosition(String(10n ** 21n + BigInt(index)), 0),
    loggedAt: Math.floor(Date.now() / 1000),
    event: {
      id: `evt_${uuid}_v1`,
      type: 'order.created',
      timestamp: at,
      data: {
        order: {
          uuid,
          order_no: `EV-${index}`,
          affiliate_slug: 'alice',
          currency: { code: 'EUR', name: 'Euro' },
          customer: { name: 'Dan Doe', email: 'dan@example.com' },
          total_shipping_value: 495,
          total_value: 20395,
          total_tax_value: 3781,
          order_rows: [
            {
              uuid: randomUUID(),
              product_sku: 'TENT-2P',
              product_name: 'Tent',
              segment_slug: null,
              price_value: 19900,
              tax_value: 3781,
              quantity: 1,
            },
          ],
          created_at: at,
          updated_at: at,
          cancelled_at: null,
        },
      },
    },
  };
};

/** Events per seeded batch: each batch's top event commits it, as the change feed writes them. */
const SEEDED_BATCH = 10;

const seedLog = async (store: Store, merchantId: string, count: number) => {
  const started = performance.now();
  const chunk = 5_000;
  for (let done = 0; done < count; done += chunk) {
    const entries = Array.from({ length: Math.min(chunk, count - done) }, (_, index) => sampleEntry(done + index));
    await batchPut(
      store,
      entries.map((entry, index) => {
        const top = Math.min(count - 1, (Math.floor((done + index) / SEEDED_BATCH) + 1) * SEEDED_BATCH - 1);
        return eventLogItem(merchantId, entry.position, entry, sampleEntry(top).position);
      }),
    );
  }
  console.log(`- seeded ${count.toLocaleString('en-US')} log events in ${((performance.now() - started) / 1000).toFixed(0)} s`);
};

type PageCase = { name: string; at: number; limit: number; types?: string[] };

const pageCases = (count: number): PageCase[] => [
  { name: 'first', at: -1, limit: 25 },
  { name: 'first', at: -1, limit: 100 },
  { name: 'middle', at: Math.floor(count / 2), limit: 25 },
  { name: 'middle', at: Math.floor(count / 2), limit: 100 },
  { name: 'near the end', at: count - 60, limit: 25 },
  { name: 'rare type, none match', at: -1, limit: 25, types: ['invite.accepted'] },
];

const measurePages = async (measure: ReturnType<typeof meteredStore>, merchantId: string, count: number) => {
  const rows: { name: string; limit: number; calls: number; rcu: number; items: number }[] = [];
  for (const page of pageCases(count)) {
    const after = page.at < 0 ? LOG_START : sampleEntry(page.at).position;
    const measured = await measure(async (store) => {
      const result = await eventLogPage(store, merchantId, after, page.limit, MAX_EXAMINED_PER_PAGE_VALUE, {
        types: page.types,
      });
      return result.items.length;
    });
    rows.push({ name: page.name, limit: page.limit, items: measured.value, calls: measured.calls.length, rcu: measured.rcu });
  }
  return rows;
};

/** `npm run bench -- --events N`: prints the latency and the page cost at 1,000 and N events. */
export const benchEvents = ({ events }: { events: number }) =>
  onBenchStack({ CONSUMER_POLL: 'off' }, async (stack) => {
    const live = stack.stages.live;
    const merchant = await seedMerchants(
      stack,
      ['poll', 'small', 'large'].map((key) => benchMerchant(key, `Events bench ${key}`)),
    );
    console.log(`\n## Event log (${new Date().toISOString()})\n`);
    console.log("From a create's answer to its `order.created` read by a consumer polling every 100 ms:\n");
    printTable(console.log, 'load | seen | p50 | p99 | max', [await latency(live.url, merchant('poll').token)]);
    console.log('');
    await seedLog(live.store, merchant('small').id, EVENTS_BENCH.baseline);
    await seedLog(live.store, merchant('large').id, events);
    const measure = meteredStore(stack.endpoints.dynamodb, live.table);
    const baseRows = await measurePages(measure, merchant('small').id, EVENTS_BENCH.baseline);
    const largeRows = await measurePages(measure, merchant('large').id, events);
    console.log('');
    const ratios = largeRows.map((row, index) => row.rcu / (baseRows[index]?.rcu ?? Number.NaN));
    printTable(
      console.log,
      'page | limit | events read | calls | RCU at 1,000 | RCU at N | N vs 1,000',
      largeRows.map((row, index) => {
        const base = `${baseRows[index]?.rcu.toFixed(1)}`;
        return [row.name, row.limit, row.items, row.calls, base, row.rcu.toFixed(1), `${ratios[index]?.toFixed(2)}x`];
      }),
    );
    const worst = Math.max(0, ...ratios);
    console.log(
      `\nN = ${events.toLocaleString('en-US')}; worst ratio ${worst.toFixed(2)}x (target ≤ 1.50x: ${worst <= 1.5 ? 'PASS' : 'MISS'}).`,
    );
  });
