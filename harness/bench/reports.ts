/** The commission report: how soon a create counts, and its cost at 20,000 orders vs one (docs/contributing.md#how-each-part-measures). */

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod/mini';
import type { LocalStack } from '#local/stack';
import type { Store } from '#shared/admin/store';
import type { CommissionLedger } from '#shared/db/entities/commission';
import { applyLedgerWrites, type LedgerWrite, paddedSequence } from '#shared/db/entities/commission-totals';
import { commissionReport, ledgerTotalsDeltas } from '#shared/domain/reports';
import { reportQuery } from '#shared/schemas/reports';
import { benchMerchant, createOrders, freshCreateBody, meteredStore, onBenchStack, printTable, seedMerchants, send, sum } from './local';
import { percentile } from './percentile';

const REPORTS_BENCH = { orders: 100, concurrency: 10, pollMs: 100, affiliates: 500, bigOrders: 20_000, samples: 30, warmup: 3 };
/** The seeded month and its year (`to` exclusive). */
const MONTH = { from: '2025-11-01', to: '2025-12-01' };
const YEAR = { from: '2025-01-01', to: '2026-01-01' };
/** How long the poller waits, after the last create, for the report to count every order. */
const SETTLE_MS = 60_000;

const reportsMerchant = (key: string) => ({
  ...benchMerchant(key, `Reports bench ${key}`),
  tiers: [{ slug: 'gold', name: 'Gold', default: true }],
  segments: [{ key: 'default', name: 'Default', default: true, rates: { gold: 10 } }],
  affiliates: [{ slug: 'alice', name: 'Alice', email: 'alice@example.com', tier: 'gold', status: 'active' as const }],
});

const reportUrl = (base: string, query: Record<string, string>) => `${base}/api/v2/reports/commissions?${new URLSearchParams(query)}`;

type ReportBody = { data: { rows: { orders: number }[] }; meta: { pagination: { total: number } } };

const current = async (base: string, token: string) => {
  const answeredAt: number[] = [];
  const countedAt: number[] = [];
  let writingUntil = Number.POSITIVE_INFINITY;
  const poller = (async () => {
    while (countedAt.length < REPORTS_BENCH.orders && performance.now() < writingUntil + SETTLE_MS) {
      // A busy local stack may answer 503: the poller reads again.
      const reply = await send(reportUrl(base, { group_by: 'affiliate' }), token);
      const now = performance.now();
      const orders = reply.status === 200 ? sum((reply.body as ReportBody).data.rows, (row) => row.orders) : 0;
      while (countedAt.length < orders) countedAt.push(now);
      await sleep(REPORTS_BENCH.pollMs);
    }
  })();
  await createOrders(
    base,
    token,
    Array.from({ length: REPORTS_BENCH.orders }, () => freshCreateBody('RP')),
    REPORTS_BENCH.concurrency,
    () => answeredAt.push(performance.now()),
  );
  writingUntil = performance.now();
  await poller;
  const delays = countedAt.map((at, index) => at - (answeredAt[index] ?? Number.NaN));
  const [p50, p99, max] = [percentile(delays, 50), percentile(delays, 99), percentile(delays, 100)];
  console.log("From a create's 201 to the current month's report (by affiliate, read every 100 ms) counting it:\n");
  printTable(console.log, 'load | counted | p50 | p99 | max', [
    [
      `${REPORTS_BENCH.orders} creates, ${REPORTS_BENCH.concurrency} at a time`,
      `${countedAt.length} of ${answeredAt.length}`,
      ...[p50, p99, max].map((ms) => `${ms.toFixed(0)} ms`),
    ],
  ]);
  const pass = countedAt.length === answeredAt.length && max <= 5_000;
  console.log(`\nTarget: every order counted within 5 s: ${pass ? 'PASS' : 'MISS'}.\n`);
};

/** A ledger of one order with its accrual at `at`, as the commission consumer writes it. */
const ledger = (slug: string, at: string): CommissionLedger => ({
  order_uuid: randomUUID(),
  order_no: `RB-${randomUUID()}`,
  affiliate_slug: slug,
  tier_slug: 'gold',
  currency_code: 'EUR',
  status: 'pending',
  rows: [{ row_uuid: randomUUID(), segment_uuid: null, rate: 10, base_value: 19_900, amount: 1_990 }],
  entries: [{ type: 'accrual', amount: 1_990, at, version: 1 }],
  net_amount: 1_990,
  applied_version: 1,
  created_at: at,
  updated_at: at,
});

/** Ledger writes per applyLedgerWrites: ten affiliates' orders of the big merchant (310 affiliate items, 31 merchant items). */
const SEED_BATCH = 400;

/** Applies the orders' first ledger writes in stream order, SEED_BATCH to a batch (each item is written once per batch). */
const seedTotals = async (store: Store, merchantId: string, orders: readonly { slug: string; at: string }[]) => {
  const writes = orders.map(
    ({ slug, at }, index): LedgerWrite => ({
      seq: paddedSequence(String(index + 1)),
      deltas: ledgerTotalsDeltas(undefined, ledger(slug, at)),
      at,
    }),
  );
  for (let start = 0; start < writes.length; start += SEED_BATCH)
    await applyLedgerWrites(store, merchantId, writes.slice(start, start + SEED_BATCH));
};

const slugOf = (index: number) => `aff-${String(index).padStart(3, '0')}`;

/** 20,000 orders over the month's days and 500 affiliates (grouped by affiliate), then one in each other month of the year. */
const bigOrders = () => {
  const perAffiliate = REPORTS_BENCH.bigOrders / REPORTS_BENCH.affiliates;
  const days = 30;
  const inMonth = Array.from({ length: REPORTS_BENCH.bigOrders }, (_, index) => ({
    slug: slugOf(Math.floor(index / perAffiliate)),
    at: new Date(Date.parse(`${MONTH.from}T00:00:00Z`) + (index % days) * 86_400_000 + (index % 86_400) * 1000).toISOString(),
  }));
  const otherMonths = Array.from({ length: 12 }, (_, month) => `2025-${String(month + 1).padStart(2, '0')}-15T12:00:00.000Z`)
    .filter((at) => !at.startsWith(MONTH.from.slice(0, 7)))
    .map((at) => ({ slug: slugOf(0), at }));
  return [...inMonth, ...otherMonths];
};

/** A report read; `vs` is the case (index) its ratio is taken against, `target` whether that ratio must be within 3x. */
type Case = { report: string; merchant: 'big' | 'one order'; query: Record<string, string>; vs?: number; target?: boolean };

const byAffiliate = { ...MONTH, group_by: 'affiliate' };
const largest = { ...byAffiliate, per_page: '100' };
/** 500 affiliate rows: 34 pages of the default 15, 5 of the largest 100. */
const CASES: Case[] = [
  { report: 'month by affiliate, first page', merchant: 'one order', query: byAffiliate },
  { report: 'month by affiliate, first page', merchant: 'big', query: byAffiliate, vs: 0, target: true },
  { report: 'month by affiliate, middle page (17 of 34)', merchant: 'big', query: { ...byAffiliate, page: '17' }, vs: 0 },
  { report: 'month by affiliate, last page (34 of 34)', merchant: 'big', query: { ...byAffiliate, page: '34' }, vs: 0 },
  { report: 'month by affiliate, first page of 100', merchant: 'one order', query: largest },
  { report: 'month by affiliate, first page of 100', merchant: 'big', query: largest, vs: 4 },
  { report: 'month by affiliate, middle page of 100 (3 of 5)', merchant: 'big', query: { ...largest, page: '3' }, vs: 4 },
  { report: 'month by affiliate, last page of 100 (5 of 5)', merchant: 'big', query: { ...largest, page: '5' }, vs: 4 },
  { report: 'month by month', merchant: 'big', query: { ...MONTH, group_by: 'month' } },
  { report: 'year by month', merchant: 'big', query: { ...YEAR, group_by: 'month' }, vs: 8, target: true },
];

const constantCost = async (stack: LocalStack, merchant: (key: string) => { id: string; token: string }) => {
  const live = stack.stages.live;
  const started = performance.now();
  await seedTotals(live.store, merchant('big').id, bigOrders());
  await seedTotals(live.store, merchant('small').id, [{ slug: slugOf(0), at: `${MONTH.from.slice(0, 7)}-15T12:00:00.000Z` }]);
  console.log(
    `Seeded the totals of ${REPORTS_BENCH.bigOrders.toLocaleString('en-US')} orders in ${((performance.now() - started) / 1000).toFixed(0)} s.\n`,
  );
  await sleep(5_000); // the change feed reads the seeding's stream records (they call for nothing) before the reads are timed

  const who = (entry: Case) => merchant(entry.merchant === 'big' ? 'big' : 'small');
  const times = CASES.map((): number[] => []);
  const answers: ReportBody[] = [];
  for (let round = 0; round < REPORTS_BENCH.warmup + REPORTS_BENCH.samples; round++) {
    for (const [index, entry] of CASES.entries()) {
      const begun = performance.now();
      const response = await fetch(reportUrl(live.url, entry.query), { headers: { Authorization: `Bearer ${who(entry).token}` } });
      if (response.status !== 200) throw new Error(`${entry.report} (${entry.merchant}) answered ${response.status}`);
      answers[index] = (await response.json()) as ReportBody;
      if (round >= REPORTS_BENCH.warmup) times[index]?.push(performance.now() - begun);
    }
  }
  const measure = meteredStore(stack.endpoints.dynamodb, live.table);
  const rows: { p50: number; rcu: number; calls: number }[] = [];
  for (const [index, entry] of CASES.entries()) {
    const query = z.parse(reportQuery, entry.query);
    const { calls, rcu } = await measure((store) => commissionReport(store, who(entry).id, query));
    rows.push({ p50: percentile(times[index] ?? [], 50), rcu, calls: calls.length });
  }
  const targets: string[] = [];
  const table = rows.map((row, index) => {
    const entry = CASES[index] as Case;
    const base = entry.vs === undefined ? undefined : rows[entry.vs];
    const against = entry.vs === undefined ? undefined : CASES[entry.vs];
    const ratios = base ? [row.p50 / base.p50, row.rcu / base.rcu] : [];
    const answer = answers[index];
    if (base && entry.target)
      targets.push(
        `- ${entry.report} (${entry.merchant}) vs ${against?.report} (${against?.merchant}) within 3x: ${ratios.every((ratio) => ratio <= 3) ? 'PASS' : 'MISS'}`,
      );
    return [
      entry.report,
      entry.merchant,
      `${answer?.data.rows.length} (of ${answer?.meta.pagination.total})`,
      `${row.p50.toFixed(1)} ms`,
      row.calls,
      row.rcu.toFixed(1),
      ratios.length ? ratios.map((ratio) => `${ratio.toFixed(2)}x`).join(', ') : 'baseline',
    ];
  });
  printTable(console.log, 'report | merchant | rows (of total) | p50 | calls | RCU | ratio (p50, RCU)', table);
  console.log(`\nTargets (p50 and RCU):\n${targets.join('\n')}`);
};

/** `npm run bench -- --reports`: prints how current the report is and what it costs at 20,000 orders vs one. */
export const benchReports = () =>
  onBenchStack({}, async (stack) => {
    const merchant = await seedMerchants(stack, [reportsMerchant('current'), reportsMerchant('big'), reportsMerchant('small')]);
    console.log(`\n## Commission reports (${new Date().toISOString()})\n`);
    await current(stack.stages.live.url, merchant('current').token);
    await constantCost(stack, merchant);
  });
