/** A page of the order list's read units at 20,000 and at N orders: the same at any size (docs/contributing.md#how-each-part-measures). */

import { randomUUID } from 'node:crypto';
import type { Store } from '#shared/admin/store';
import { batchPut } from '#shared/db/entities/batch';
import {
  applyCountChanges,
  BLOCK_SIZE,
  blockOf,
  GROUP_SIZE,
  readBlockCounts,
  refreshGroupTotals,
  takeSequence,
} from '#shared/db/entities/counter';
import { putNewMerchant } from '#shared/db/entities/merchant';
import { buildOrder, orderCountChange, orderList, orderRecord, orderUuidFor } from '#shared/db/entities/order';
import { readPage } from '#shared/db/pages';
import { fixtureOrder, meteredStore, onBenchStack, printTable, sumUnits } from './local';

const BASELINE_ORDERS = 20_000;
const PER_PAGES = [25, 100] as const;
/** Orders written per step: one group of block counts, so each step refreshes the group it filled. */
const STEP = GROUP_SIZE * BLOCK_SIZE;
const BASE_TIME = Date.parse('2025-01-01T00:00:00Z');

/** Seeds one merchant with `count` orders (sequence 1..count), printing progress; returns its id. */
const seedOrders = async (store: Store, key: string, count: number): Promise<string> => {
  const id = randomUUID();
  await putNewMerchant(store, { id, name: `Page cost ${key}`, currency: 'EUR', defaultTier: 'gold' });
  const first = await takeSequence(store, id, 'orders', count);
  const start = performance.now();
  let lastPrint = start;
  for (let done = 0; done < count; ) {
    const size = Math.min(STEP, count - done);
    const orders = Array.from({ length: size }, (_, index) => {
      const input = fixtureOrder(key, done + index);
      return buildOrder(input, {
        uuid: orderUuidFor(id, input.order_no),
        seq: first + done + index,
        created_at: new Date(BASE_TIME + (done + index) * 1000).toISOString(),
      });
    });
    await batchPut(
      store,
      orders.map((order) => orderRecord(id, order, { history: true })),
    );
    const changes = orders.map(orderCountChange);
    await applyCountChanges(store, id, changes);
    await refreshGroupTotals(
      store,
      id,
      changes.map((change) => ({ ...change, block: blockOf(change.seq) })),
    );
    done += size;
    const now = performance.now();
    if (now - lastPrint > 15_000 || done === count) {
      lastPrint = now;
      const rate = done / ((now - start) / 1000);
      const left = (count - done) / rate;
      console.log(
        `  ${key}: ${done.toLocaleString('en-US')} / ${count.toLocaleString('en-US')} orders, ${rate.toFixed(0)} orders/s${done < count ? `, about ${(left / 60).toFixed(1)} min left` : ''}`,
      );
    }
  }
  console.log(`- seeded ${count.toLocaleString('en-US')} orders in ${((performance.now() - start) / 1000).toFixed(0)} s`);
  return id;
};

/** Measures page 1, the middle page and the last page of one merchant's order list. */
const measureMerchant = async (measure: ReturnType<typeof meteredStore>, merchantId: string, orders: number) => {
  const rows = [];
  // Before group totals, a page read every block count of the bucket (one Query, continued past 1 MB).
  const allBlocks = await measure((store) => readBlockCounts(store, merchantId, 'orders', 'all'));
  for (const perPage of PER_PAGES) {
    const last = Math.ceil(orders / perPage);
    for (const [label, page] of [
      ['1', 1],
      [`middle (${Math.ceil(last / 2)})`, Math.ceil(last / 2)],
      [`last (${last})`, last],
    ] as const) {
      const { value, calls } = await measure((store) => readPage(store, orderList(merchantId), { page, per_page: perPage }));
      // Orders are dense: page p holds sequence numbers orders - (p-1)*perPage down to 1 at most.
      const top = orders - (page - 1) * perPage;
      const expected = Array.from({ length: Math.min(perPage, top) }, (_, index) => top - index);
      const ok = value.total === orders && JSON.stringify(value.items.map((order) => order.seq)) === JSON.stringify(expected);
      const indexCalls = calls.filter((call) => call.index !== undefined);
      rows.push({
        orders,
        page: label,
        perPage,
        calls: calls.length,
        rcu: sumUnits(calls),
        countRcu: sumUnits(calls.filter((call) => call.index === undefined)),
        beforeCalls: allBlocks.calls.length + indexCalls.length,
        beforeRcu: sumUnits(allBlocks.calls) + sumUnits(indexCalls),
        ok,
      });
    }
  }
  return rows;
};

type Row = Awaited<ReturnType<typeof measureMerchant>>[number];

const fixed = (value: number) => (Number.isFinite(value) ? (Number.isInteger(value) ? String(value) : value.toFixed(1)) : 'n/a');
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a');

/** `npm run bench -- --orders N`: seeds, measures, prints a markdown table. */
export const benchPageCost = async (orders: number) => {
  const startedAt = Date.now();
  // The seeder writes the counts and group totals itself: the change feed would count the seeded blocks a second time.
  await onBenchStack({ CONSUMER_POLL: 'off', STREAM_POLL: 'off' }, async (stack) => {
    const live = stack.stages.live;
    console.log(`\n## Page cost at ${BASELINE_ORDERS.toLocaleString('en-US')} and ${orders.toLocaleString('en-US')} orders\n`);
    const baseline = await seedOrders(live.store, 'P20K', BASELINE_ORDERS);
    const large = await seedOrders(live.store, 'PN', orders);
    const measure = meteredStore(stack.endpoints.dynamodb, live.table);
    const baseRows = await measureMerchant(measure, baseline, BASELINE_ORDERS);
    const largeRows = await measureMerchant(measure, large, orders);
    const baseOf = (row: Row) =>
      baseRows.find((base) => base.perPage === row.perPage && base.page.split(' ')[0] === row.page.split(' ')[0]);
    console.log('');
    printTable(
      console.log,
      'orders | page | per_page | DynamoDB calls | RCU | of which counts | RCU vs 20,000 | before: calls | before: RCU | before: vs 20,000 | page checked',
      [...baseRows, ...largeRows].map((row) => {
        const base = baseOf(row);
        return [
          row.orders.toLocaleString('en-US'),
          row.page,
          row.perPage,
          row.calls,
          fixed(row.rcu),
          fixed(row.countRcu),
          base ? ratio(row.rcu / base.rcu) : 'n/a',
          row.beforeCalls,
          fixed(row.beforeRcu),
          base ? ratio(row.beforeRcu / base.beforeRcu) : 'n/a',
          row.ok ? 'exact' : '**WRONG**',
        ];
      }),
    );
    const worst = Math.max(...largeRows.map((row) => row.rcu / (baseOf(row)?.rcu ?? Number.NaN)));
    console.log('');
    console.log(
      `Worst ratio at ${orders.toLocaleString('en-US')} vs ${BASELINE_ORDERS.toLocaleString('en-US')} orders: ${ratio(worst)} (target ≤ 1.50x: ${worst <= 1.5 ? 'PASS' : 'MISS'}). ` +
        `Took ${((Date.now() - startedAt) / 60_000).toFixed(1)} min.`,
    );
  });
};
