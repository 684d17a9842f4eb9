/** `npm run bench`: measures the service on fresh local stacks and writes docs/benchmarks.md (USAGE); it asserts nothing. */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { benchEvents } from '#harness/bench/events';
import { benchHeat } from '#harness/bench/heat';
import { benchPageCost } from '#harness/bench/page-cost';
import { benchReports } from '#harness/bench/reports';
import { functionSpecs } from '#lib/function-specs';
import type { LocalStack } from '#local/stack';
import { bundleFunction, COLD_START_BUDGET, importBundle } from '#scripts/bundles';
import type { FixtureMerchant } from '#shared/admin/fixture';
import { workPage } from '#shared/db/entities/owed-work';
import {
  benchCommit,
  benchMerchant,
  closeConnections,
  fixtureOrder,
  printTable,
  type Reply,
  seedMerchants,
  send,
  startBenchStack,
  statusCount,
} from './bench/local';
import { percentile } from './bench/percentile';
import { benchQuota } from './bench/quota';
import { BEFORE_ONE_PUT, benchSideBySide, dropText, p50Drop, printSideBySide, SIDE_BY_SIDE_TITLE } from './bench/side-by-side';
import { benchWebhooks, WEBHOOK_BENCH, WEBHOOK_BENCH_MANY_HANGING, type WebhookBenchResult } from './bench/webhooks';

const USAGE = `usage: npm run bench [-- --scale N] [-- --out FILE]
       npm run bench -- --orders N
       npm run bench -- --webhooks [--rate N] [--noisy N]
       npm run bench -- --quota
       npm run bench -- --events N
       npm run bench -- --reports

Starts its own in-memory local stack on free ports (a running npm start is not touched) and
measures order creation (sequential and bursts of concurrent creates), stored vs answered orders,
seeding, the cost of page 1 vs the last page of every list, the sequential create beside the commit
before the one-put create (alone: npx tsx harness/bench/side-by-side.ts [--against REV]), each function
bundle's cold start, then
partition heat and the cost of a create (harness/bench/heat.ts), webhook isolation and the quota
across containers (most of its time), and prints its targets.
At --scale 1 (the default; several minutes on 2 cores) it writes docs/benchmarks.md; --scale 0.1
seeds a tenth of the list sizes and only prints. --out FILE writes the report there instead.

--orders N measures only the read units of a page of the order list at 20,000 and at N orders
(pages 1, middle and last, per_page 25 and 100) and prints them; N = 1,000,000 seeds for 10+
minutes (harness/bench/page-cost.ts).

--webhooks measures only webhook delivery latency, with and without a hanging endpoint, and prints
it (harness/bench/webhooks.ts); --rate N sets the healthy merchant's changes per second (default 40);
--noisy N the other merchants with two endpoints each (default 5; 13 or more hang more endpoints than
the stage has deliverers), their changes about 20 a second in all. --quota measures only the per-merchant quota beside a noisy
neighbour and what it costs, and its exactness across 20 containers (harness/bench/quota.ts). --events N
measures only the event log: how soon a polling consumer sees a create, and what a page costs at
1,000 and at N events (harness/bench/events.ts). --reports measures only the commission report: how
soon it counts a create, and what it costs at 20,000 orders over 500 affiliates vs one order and for
a year vs a month (harness/bench/reports.ts).`;

const { values: options } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    out: { type: 'string' },
    orders: { type: 'string' },
    webhooks: { type: 'boolean', default: false },
    rate: { type: 'string' },
    noisy: { type: 'string' },
    quota: { type: 'boolean', default: false },
    events: { type: 'string' },
    reports: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
/** An option's whole number from `min` to `max`; else `message` and exit 2. */
const wholeOption = (value: string | number, message: string, min = 1, max = Number.POSITIVE_INFINITY) => {
  const number = Number(value);
  if (Number.isInteger(number) && number >= min && number <= max) return number;
  console.error(message);
  process.exit(2);
};
/** --rate and --noisy as benchWebhooks takes them: the noisy merchants' changes about as many a second in all whatever their number. */
const webhookOptions = () => {
  const rate = wholeOption(options.rate ?? WEBHOOK_BENCH.rate, '--rate takes a positive integer, e.g. --rate 100');
  const noisyMerchants = wholeOption(
    options.noisy ?? WEBHOOK_BENCH.noisyMerchants,
    '--noisy takes a whole number from 1 to 50, e.g. --noisy 15',
    1,
    50,
  );
  const noisyRate = Math.max(1, Math.round((WEBHOOK_BENCH.noisyRate * WEBHOOK_BENCH.noisyMerchants) / noisyMerchants));
  return { rate, noisyMerchants, noisyRate };
};
/** Runs the one part an option asks for alone, if any; whether it did. */
const benchAlone = async () => {
  if (options.orders !== undefined)
    await benchPageCost(wholeOption(options.orders, '--orders takes a positive integer, e.g. --orders 1000000'));
  else if (options.webhooks) await benchWebhooks(console.log, webhookOptions());
  else if (options.events !== undefined)
    await benchEvents({ events: wholeOption(options.events, '--events takes an integer of at least 1000, e.g. --events 1000000', 1000) });
  else if (options.quota) await benchQuota();
  else if (options.reports) await benchReports();
  else return false;
  return true;
};
if (await benchAlone()) process.exit(0);
const scale = Number(options.scale);
if (!Number.isFinite(scale) || scale <= 0) {
  console.error('--scale takes a positive number, e.g. --scale 0.1');
  process.exit(2);
}
const REPORT_PATH = options.out ?? (scale === 1 ? resolve(import.meta.dirname, '..', 'docs', 'benchmarks.md') : undefined);
const sized = (count: number) => Math.max(1, Math.round(count * scale));
const SIZES = { affiliates: sized(50_000), requests: sized(20_000), invites: sized(20_000), orders: sized(20_000) };
const SEQUENTIAL = 200;
const BURSTS = [10, 50, 100, 200, 500];
const WARMUP = 5;
/** Creates sent before the create figures are taken, for DynamoDB Local's JVM warm-up (BENCH_INTRO). */
const WARMUP_CREATES = 1000;
const WARMUP_CONCURRENCY = 50;
const SAMPLES = 30;
const PER_PAGE = 15;

const ms = (value: number) => (Number.isFinite(value) ? `${value < 100 ? value.toFixed(1) : value.toFixed(0)} ms` : 'n/a');
const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;
const rate = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : 'n/a');
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a');
const count = (value: number) => value.toLocaleString('en-US');

/** The report, as it is printed: written to REPORT_PATH at the end. */
const report: string[] = [];
const print = (line: string) => {
  console.log(line);
  report.push(line);
};

const table = (title: string, head: string, rows: (string | number)[][]) => {
  print(`\n## ${title}\n`);
  printTable(print, head, rows);
};

/** Runs one part of the bench; one that throws is reported and the others still run. */
const attempt = async (part: string, run: () => Promise<unknown>) => {
  try {
    await run();
  } catch (error) {
    print(`\n${part} failed: ${(error as Error).stack ?? String(error)}`);
  }
};

const timed = async <T>(fn: () => Promise<T>) => {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
};

const BASE_TIME = Date.parse('2026-01-01T00:00:00Z');
const at = (index: number) => new Date(BASE_TIME + index * 1000).toISOString();
const TIERS = [
  { slug: 'gold', name: 'Gold', default: true },
  { slug: 'silver', name: 'Silver' },
  { slug: 'bronze', name: 'Bronze' },
];
const STATUSES = ['pending', 'accepted', 'declined'] as const;
/** About one invite in ten has this in its address: the `email` filter's needle. */
const NEEDLE = 'needle';

const order = (prefix: string, index: number, affiliateSlug: string) => ({
  key: `${prefix}-${index}`,
  created_at: at(index),
  ...fixtureOrder(prefix, index, affiliateSlug),
});

/** One merchant that only has orders (and the one affiliate they name): the seeding figure. */
const ordersOnlyMerchant = (): FixtureMerchant => ({
  ...benchMerchant('orders-only', 'Orders only'),
  orders: Array.from({ length: SIZES.orders }, (_, index) => order('OO', index, 'alice')),
});

const largeMerchant = (): FixtureMerchant => ({
  ...benchMerchant('large', 'Large program'),
  tiers: TIERS,
  segments: [
    { key: 'default', name: 'Default', default: true, rates: { gold: 10, silver: 7.5, bronze: 5 } },
    { key: 'shoes', name: 'Shoes', slugs: ['shoes'], rates: { gold: 12, silver: 9, bronze: 6 } },
  ],
  affiliates: Array.from({ length: SIZES.affiliates }, (_, index) => ({
    slug: `aff-${index}`,
    name: `Affiliate ${index}`,
    email: `aff-${index}@example.com`,
    tier: TIERS[index % TIERS.length]?.slug,
    status: index % 20 === 0 ? ('inactive' as const) : ('active' as const),
  })),
  affiliate_requests: Array.from({ length: SIZES.requests }, (_, index) => ({
    key: `req-${index}`,
    status: STATUSES[index % STATUSES.length],
    requested_at: at(index),
    affiliate: { slug: `req-${index}`, name: `Requester ${index}`, email: `req-${index}@example.com` },
  })),
  invites: Array.from({ length: SIZES.invites }, (_, index) => ({
    key: `inv-${index}`,
    email: index % 10 === 0 ? `invitee-${index}@${NEEDLE}-corp.example` : `invitee-${index}@example.com`,
    link_used_at: index % 4 === 0 ? at(index) : null,
  })),
  orders: Array.from({ length: SIZES.orders }, (_, index) => order('LG', index, `aff-${(index * 7) % SIZES.affiliates}`)),
});

/** One of each, so that every list (and every filter) has exactly one item. */
const smallMerchant = (): FixtureMerchant => ({
  ...benchMerchant('small', 'Small program'),
  tiers: [{ slug: 'silver', name: 'Silver' }],
  segments: [{ key: 'default', name: 'Default', default: true, rates: { silver: 7.5 } }],
  affiliates: [{ slug: 'solo', name: 'Solo', email: 'solo@example.com', tier: 'silver', status: 'active' }],
  affiliate_requests: [{ key: 'req', status: 'pending', affiliate: { slug: 'asker', name: 'Asker', email: 'asker@example.com' } }],
  invites: [{ key: 'inv', email: `invitee@${NEEDLE}-corp.example`, link_used_at: null }],
  orders: [order('SM', 0, 'solo')],
});

const creatorMerchant = (): FixtureMerchant => ({
  ...benchMerchant('creates', 'Burst merchant'),
  affiliates: [{ slug: 'popular', name: 'Popular', email: 'popular@example.com', status: 'active' }],
});

/** The Targets table's rows, in the order the parts measured them. */
const summary: string[][] = [];
const target = (name: string, measured: string, pass: boolean) => summary.push([name, measured, pass ? 'PASS' : 'MISS']);

/** Bursts of BURSTS concurrent creates, each after the last one's tail: their table and their targets. */
const burstsOf = async (create: () => Promise<Reply>, sequentialRate: number) => {
  const rows: (string | number)[][] = [];
  const failures: string[] = [];
  let burst200 = { rate: NaN, ratio: NaN, p99: NaN };
  for (const size of BURSTS) {
    await sleep(500); // let the previous burst's tail settle
    const { value: replies, ms: wall } = await timed(() => Promise.all(Array.from({ length: size }, create)));
    const refused = replies.filter((reply) => reply.status !== 201);
    const burstRate = (size - refused.length) / (wall / 1000);
    const latencies = replies.map((reply) => reply.ms);
    if (refused.length > 0) failures.push(`${size}: ${statusCount(refused)}`);
    if (size === 200) burst200 = { rate: burstRate, ratio: burstRate / sequentialRate, p99: percentile(latencies, 99) };
    rows.push([
      size,
      statusCount(replies),
      seconds(wall),
      rate(burstRate),
      ms(percentile(latencies, 50)),
      ms(percentile(latencies, 99)),
      ratio(burstRate / sequentialRate),
    ]);
  }
  table(
    'Bursts of concurrent creates (one merchant, one affiliate)',
    'concurrent | statuses | wall | orders/s | p50 | p99 | vs sequential',
    rows,
  );
  const all201 = failures.length === 0;
  target('every create 201 at every burst up to 500', all201 ? `all ${BURSTS.join(' / ')} → 201` : failures.join('; '), all201);
  target(
    'burst-200 throughput ≥ 1.5x sequential',
    `${ratio(burst200.ratio)} (${rate(burst200.rate)} vs ${rate(sequentialRate)} orders/s)`,
    burst200.ratio >= 1.5,
  );
  target('p99 at 200 concurrent < 3 s', ms(burst200.p99), burst200.p99 < 3000);
};

/** Every answer that was not a 201 should have left no order behind: the list's total right after the bursts and once recounted. */
const storedVsAnswered = async (stack: LocalStack, token: string, merchantId: string, creates: { sent: number; answered: number }) => {
  const listTotal = async () => {
    const stored = await send(`${stack.stages.live.url}/api/v2/orders?per_page=1`, token);
    const total = (stored.body as { meta?: { pagination?: { total?: number } } } | undefined)?.meta?.pagination?.total;
    return total ?? `n/a (status ${stored.status})`;
  };
  await sleep(2000);
  const totalAtOnce = await listTotal();
  const repairStart = performance.now();
  const marked = async () => (await workPage(stack.stages.live.store, merchantId, 'RECOUNT', 0, 1)).keys.length > 0;
  while ((await marked()) && performance.now() - repairStart < 180_000) await sleep(1000);
  const repairSeconds = (performance.now() - repairStart) / 1000;
  table(
    'Orders stored vs orders answered 201 (warm-up, sequential and bursts)',
    `creates sent | answered 201 | list total 2 s after | list total after count repair (${repairSeconds.toFixed(0)} s later)`,
    [[creates.sent, creates.answered, totalAtOnce, await listTotal()]],
  );
};

const benchCreates = async (stack: LocalStack) => {
  const { token, id: merchantId } = (await seedMerchants(stack, [creatorMerchant()]))('creates');
  const url = `${stack.stages.live.url}/api/v2/orders/create`;
  let serial = 0;
  let answered = 0;
  const run = process.pid;
  const create = async () => {
    const reply = await send(url, token, {
      method: 'POST',
      body: {
        affiliate_slug: 'popular',
        order_no: `BENCH-${run}-${serial++}`,
        total_shipping_value: 0,
        currency_code: 'EUR',
        customer: { name: 'Burst Buyer', email: `buyer-${serial % 100}@example.com` },
        order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: 1 }],
      },
    });
    if (reply.status === 201) answered++;
    return reply;
  };

  for (let sent = 0; sent < WARMUP_CREATES; sent += WARMUP_CONCURRENCY)
    await Promise.all(Array.from({ length: WARMUP_CONCURRENCY }, create));
  const sequential: Reply[] = [];
  const { ms: sequentialWall } = await timed(async () => {
    for (let index = 0; index < SEQUENTIAL; index++) sequential.push(await create());
  });
  const sequential201 = sequential.filter((reply) => reply.status === 201).length;
  const sequentialRate = sequential201 / (sequentialWall / 1000);
  const sequentialLatency = sequential.map((reply) => reply.ms);
  table('Sequential creates (one merchant, one affiliate)', 'creates | 201 | orders/s | p50 | p99', [
    [SEQUENTIAL, sequential201, rate(sequentialRate), ms(percentile(sequentialLatency, 50)), ms(percentile(sequentialLatency, 99))],
  ]);
  await burstsOf(create, sequentialRate);
  await storedVsAnswered(stack, token, merchantId, { sent: serial, answered });
};

/** Seeds the large, the orders-only and the one-of-each merchants, timing the first two; the list merchants' tokens. */
const seedLists = async (stack: LocalStack) => {
  const ordersOnly = await timed(() => seedMerchants(stack, [ordersOnlyMerchant()]));
  const large = await timed(() => seedMerchants(stack, [largeMerchant()]));
  const small = await seedMerchants(stack, [smallMerchant()]);
  table('Seeding (seedFixture: BatchWriteItem in parallel chunks)', 'merchant | items in the fixture | seed time', [
    [`orders only`, `${count(SIZES.orders)} orders (+ customers)`, seconds(ordersOnly.ms)],
    [
      'large',
      `${count(SIZES.affiliates)} affiliates over 3 tiers, ${count(SIZES.requests)} requests, ${count(SIZES.invites)} invites, ${count(SIZES.orders)} orders`,
      seconds(large.ms),
    ],
  ]);
  target(`seeding ${count(SIZES.orders)} orders < 20 s`, seconds(ordersOnly.ms), ordersOnly.ms < 20_000);
  return { large: large.value('large').token, small: small('small').token };
};

const benchLists = async (stack: LocalStack) => {
  const tokens = await seedLists(stack);
  const lists = [
    '/api/v2/orders',
    '/api/v2/affiliates',
    '/api/v2/affiliates?tier_slug=silver',
    '/api/v2/affiliate-requests',
    '/api/v2/affiliate-requests?status=pending,declined',
    '/api/v2/affiliates/invites',
    `/api/v2/affiliates/invites?email=${NEEDLE}`,
    '/api/v2/tiers',
    '/api/v2/segments',
  ];
  const pageUrl = (path: string, page: number) =>
    `${stack.stages.live.url}${path}${path.includes('?') ? '&' : '?'}per_page=${PER_PAGE}&page=${page}`;
  const lastPageOf = (body: unknown) => {
    const pagination = (body as { meta?: { pagination?: { last_page?: number; total_pages?: number; total?: number } } } | undefined)?.meta
      ?.pagination;
    return { last: pagination?.last_page ?? pagination?.total_pages ?? 1, total: pagination?.total };
  };
  /** Large and small requests alternate, so that load from other jobs on the machine hits both alike: each one's p50, their statuses. */
  const measurePair = async (path: string, pages: { large: number; small: number }) => {
    const statuses = { large: new Set<string>(), small: new Set<string>() };
    const samples = { large: [] as number[], small: [] as number[] };
    for (let index = 0; index < WARMUP + SAMPLES; index++) {
      for (const which of ['large', 'small'] as const) {
        const reply = await send(pageUrl(path, pages[which]), tokens[which]);
        statuses[which].add(String(reply.status));
        if (index >= WARMUP) samples[which].push(reply.ms);
      }
    }
    const [large, small] = [[...statuses.large].join('/'), [...statuses.small].join('/')];
    return {
      large: percentile(samples.large, 50),
      small: percentile(samples.small, 50),
      statuses: large === '200' && small === '200' ? '200' : `large ${large}, small ${small}`,
    };
  };

  const rows: (string | number)[][] = [];
  let worst = { ratio: 0, where: '' };
  for (const path of lists) {
    const large = lastPageOf((await send(pageUrl(path, 1), tokens.large)).body);
    const small = lastPageOf((await send(pageUrl(path, 1), tokens.small)).body);
    for (const [which, pages] of [
      ['first', { large: 1, small: 1 }],
      ['last', { large: large.last, small: small.last }],
    ] as const) {
      const p50 = await measurePair(path, pages);
      const pageRatio = p50.large / p50.small;
      const comparable = Number.isFinite(pageRatio) ? pageRatio : Infinity;
      if (comparable > worst.ratio) worst = { ratio: comparable, where: `${path} ${which} page` };
      rows.push([
        `\`${path}\``,
        which === 'first' ? '1' : `last (${pages.large} / ${pages.small})`,
        large.total === undefined ? 'n/a' : count(large.total),
        ms(p50.large),
        ms(p50.small),
        ratio(pageRatio),
        p50.statuses,
      ]);
    }
  }
  table(
    `Lists, p50 of ${SAMPLES} requests after ${WARMUP} warm-up (large and small alternating), per_page=${PER_PAGE}: large merchant vs one-of-each merchant`,
    'list | page (large / small) | total (large) | large p50 | small p50 | large/small | status',
    rows,
  );
  target('every list page within 3x of a one-of-each merchant', `worst ${ratio(worst.ratio)} (${worst.where})`, worst.ratio < 3);
};

/** Each function bundle's size and cold start (scripts/bundles.ts), median of BUNDLE_RUNS imports. */
const BUNDLE_RUNS = 5;
const benchBundles = async () => {
  const outDir = mkdtempSync(join(tmpdir(), 'merchant-api-bench-bundles-'));
  try {
    const rows: (string | number)[][] = [];
    const bundles = (await Promise.all(functionSpecs().map((spec) => bundleFunction(spec, outDir)))).sort((a, b) => b.bytes - a.bytes);
    let worst = 0;
    for (const bundle of bundles) {
      const ok = { importCpuMs: [] as number[], importMs: [] as number[], initMs: [] as number[] };
      for (let index = 0; index < BUNDLE_RUNS; index++) {
        const result = await importBundle(bundle);
        if (result.ok) for (const figure of ['importCpuMs', 'importMs', 'initMs'] as const) ok[figure].push(result[figure]);
      }
      const median = (figure: keyof typeof ok) => percentile(ok[figure], 50);
      worst = Math.max(worst, median('importCpuMs'));
      rows.push([
        bundle.spec.id,
        `${(bundle.bytes / 1024).toFixed(1)} KB`,
        `${(bundle.gzipBytes / 1024).toFixed(1)} KB`,
        ms(median('importCpuMs')),
        ms(median('importMs')),
        ms(median('initMs')),
      ]);
    }
    table(
      `Function bundles: size and cold start (median of ${BUNDLE_RUNS} imports in a fresh process)`,
      'function | minified | gzipped | import CPU | import | init from process start',
      rows,
    );
    target(
      `every function's import CPU within the cold-start budget (${COLD_START_BUDGET.importCpuMs} ms)`,
      `worst ${ms(worst)}`,
      worst <= COLD_START_BUDGET.importCpuMs,
    );
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
};

/** What each part measures and the targets, written at the head of the report. */
const BENCH_INTRO = `What the parts measure (docs/architecture.md explains the design they test):

- **Creates**: after ${count(WARMUP_CREATES)} warm-up creates (DynamoDB Local is a JVM that compiles its hot paths over its first
  thousand or so requests; DynamoDB has no such warm-up), ${SEQUENTIAL} sequential \`POST /api/v2/orders/create\` for one
  merchant and one affiliate, then bursts of ${BURSTS.join(', ')} truly concurrent creates for that merchant and affiliate
  (keep-alive agent without a socket cap): statuses, orders/s (201s / wall time), p50, p99, ratio to the sequential rate.
- **Stored vs answered**: the merchant's list total against the 201s it answered, right after the bursts and once the
  recount follow-ups have recounted every marked block.
- **Seeding**: \`seedFixture\` of a merchant with only orders, and of a large program.
- **Lists**: p50 of page 1 and of the last page (per_page=${PER_PAGE}) of every list and filter, large merchant vs a merchant
  with one of each, requests alternating so that other load on the machine hits both alike.
- **Side by side**: the same sequential creates on HEAD and on the commit before the one-put create
  (${BEFORE_ONE_PUT}: a transaction with a guard item, 5 sequential round trips), each run by \`npm start --in-memory\` on free
  ports from a worktree of its own, after 500 warm-up creates each, 200 each alternating one at a time, first with the
  change feed and consumers off (the request path alone), then with them on (harness/bench/side-by-side.ts).
- **Bundles**: each function's size and cold start (\`npm run bundle-size\` takes the median of 20).
- **Quotas**: a merchant at half its quota beside one flooding at ten times its own (429s, p50, p99 against alone and
  against the quota switched off), the flooder's admissions against its bucket, and the quota's writes per request;
  then the limiter as 20 containers against DynamoDB Local at 70 % of three quotas and in a flood (share refused, the
  worst window against rate x time + burst, writes per request).
- **Webhook delivery**: latency from a write (a shipping re-price) to its event at a receiver, at 40 events/s, alone and beside hanging endpoints of its own and of other merchants.

Absolute figures are those of the emulators (DynamoDB Local, one JVM; each stage's functions in one Node.js process) on
the machine below; the ratios are what the targets are about.`;

// Marks are recounted once 5 s old (60 s deployed): the bench waits for them, not a minute.
const stack = await startBenchStack({ CONSUMER_POLL: 'off', FOLLOW_UP_MIN_DELAY_SECONDS: '5' });
const startedAt = new Date();
const loadAtStart = loadavg()[0] ?? 0;
try {
  const { commit, dirty } = benchCommit();
  print(`# Benchmarks

Generated by \`npm run bench\` (scale ${scale}); do not edit by hand: run it again.

- date: ${startedAt.toISOString()}
- commit: ${commit || 'unknown'}${dirty ? ' (with uncommitted changes)' : ''}
- machine: ${cpus()[0]?.model ?? 'unknown cpu'}, ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB memory, Linux ${release()}
- Node.js ${process.versions.node} (${process.arch}); load average at start ${loadAtStart.toFixed(1)}

${BENCH_INTRO}`);
  await attempt('create benchmark', () => benchCreates(stack));
  await attempt('list benchmark', () => benchLists(stack));
} finally {
  closeConnections();
  await stack.stop();
}
await attempt('bundle benchmark', benchBundles);
await attempt('side-by-side creates', async () => {
  print(`\n## ${SIDE_BY_SIDE_TITLE}\n`);
  print('The request path alone (STREAM_POLL and CONSUMER_POLL off: in AWS each worker is a function of its own):\n');
  const alone = await benchSideBySide();
  printSideBySide(print, alone);
  print('\nWith every worker running in the stage process beside the creates, as `npm start` runs them:\n');
  printSideBySide(print, await benchSideBySide({ workers: true }));
  target(
    `sequential create p50 (request path) at least a quarter below ${BEFORE_ONE_PUT}'s (5 round trips), side by side`,
    dropText(p50Drop(alone)),
    p50Drop(alone) >= 0.25,
  );
});
// Partition heat and the cost of a create, on a stack of its own that records every call (harness/bench/heat.ts).
await benchHeat({ print });
/** A p99 within 1.5x of its baseline's (and `also`). */
const p99Target = (name: string, base: number, p99: number, also = true) =>
  target(name, `${ratio(p99 / base)} (${ms(base)} -> ${ms(p99)})`, p99 <= 1.5 * base && also);
/** A webhook phase's p99 within 1.5x of its baseline's, every change delivered. */
const webhookTarget = (name: string, base: WebhookBenchResult | undefined, row: WebhookBenchResult | undefined) =>
  base && row && p99Target(name, base.p99, row.p99, row.delivered === row.created);
await attempt('webhook benchmark', async () => {
  const { alone, beside, answered, hung } = await benchWebhooks(print);
  webhookTarget("webhooks: a hanging endpoint leaves another endpoint's p99 within 1.5x", alone, beside);
  webhookTarget("webhooks: ten hanging endpoints of five merchants leave a healthy merchant's p99 within 1.5x", alone, hung);
  webhookTarget('webhooks: the same ten hanging rather than answering, within 1.5x', answered, hung);
});
// Again with more hanging endpoints than the stage has deliverers: what the slow lane is for.
await attempt('webhook benchmark (many hanging)', async () => {
  const { noisyMerchants, noisyRate } = WEBHOOK_BENCH_MANY_HANGING;
  const { alone, hung } = await benchWebhooks(print, { noisyMerchants, noisyRate });
  webhookTarget(
    `webhooks: ${noisyMerchants * 2} hanging endpoints of ${noisyMerchants} merchants (more than the 50 deliverers) leave a healthy merchant's p99 within 1.5x`,
    alone,
    hung,
  );
});
await attempt('quota benchmark', async () => {
  const quota = await benchQuota(print);
  const exactness = Math.abs(quota.flood.admitted - quota.flood.allowed) / quota.flood.allowed;
  const { quietAlone, quietBeside, flood } = quota;
  target(
    'quota: a merchant at half its quota gets no 429 while another floods at 10x',
    `${quietBeside.refused} x 429 of ${quietBeside.sent}`,
    quietBeside.refused === 0,
  );
  p99Target('quota: its p99 beside the flood within 1.5x of its p99 alone', quietAlone.p99, quietBeside.p99);
  target(
    'quota: the flooding merchant admitted within 5% of what its bucket allows',
    `${count(flood.admitted)} of ${count(flood.allowed)} (${(exactness * 100).toFixed(1)}%)`,
    exactness <= 0.05,
  );
  for (const { policy, steady, worstWindowExcess } of quota.containers) {
    const name = `quota: ${policy.rate}/s (burst ${policy.burst}) over 20 containers`;
    target(`${name} at 70 %: at most 0.1 % refused`, `${steady.refused} of ${count(steady.sent)}`, steady.refused <= 0.001 * steady.sent);
    target(`${name}: no window above rate x time + burst`, `worst window ${worstWindowExcess.toFixed(1)} over`, worstWindowExcess <= 0);
  }
});
table('Targets', 'target | measured | result', summary);
print(`\nTook ${((Date.now() - startedAt.getTime()) / 60_000).toFixed(1)} min; load average at the end ${(loadavg()[0] ?? 0).toFixed(1)}.`);
if (REPORT_PATH) {
  writeFileSync(REPORT_PATH, `${report.join('\n')}\n`);
  console.log(`\nwrote ${REPORT_PATH}`);
}
