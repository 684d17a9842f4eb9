/** Partition heat and the cost of a create on a fresh recorded local stack (USAGE; docs/data-model-heat.md#how-it-is-measured). */

import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient, paginateScan } from '@aws-sdk/client-dynamodb';
import { queueWorkers, workers as workerDefs } from '#functions/workers';
import type { InvocationRecord } from '#harness/recorders/invocation-recorder';
import { type CallRecord, type PartitionWrite, recordingEnv, takeWriteRecord, type WriteRecord } from '#harness/recorders/write-recorder';
import { DEFAULT_TRACE_WORKERS, STAGE_DEFAULTS } from '#lib/config';
import { functionSpecs } from '#lib/function-specs';
import { FUNCTION_LOGGING } from '#lib/merchant-function';
import { TRACE_SAMPLING_RATE, WAF_RULES } from '#lib/rest-api';
import { localClientConfig } from '#local/aws-env';
import type { LocalStack } from '#local/stack';
import { groupBy } from '#shared/group-by';
import { WEBHOOK_EVENT_TYPES } from '#shared/webhooks/events';
import {
  billedMs,
  type CostLine,
  costLines,
  type Deployment,
  fixedMonthlyLines,
  PRICES,
  type ScenarioMeasure,
  type Stored,
  sqsRequestsFor,
  storedItem,
  type Trigger,
  writeUnitsItem,
} from './cost';
import {
  benchCommit,
  benchMerchant,
  closeConnections,
  fixtureOrder,
  mean,
  pool,
  printTable,
  type Reply,
  seedMerchants,
  send,
  startBenchStack,
  statusCount,
  sum,
} from './local';
import { createEndpoint, receiver } from './webhooks';

/** What one partition of DynamoDB takes a second (docs/data-model-heat.md). */
const PARTITION_WCU_PER_SECOND = 1_000;
const PARTITION_RCU_PER_SECOND = 3_000;

const HEAT_DEFAULTS = { merchants: 100, creates: 20, concurrency: 20, cancels: 1 };
type HeatOptions = typeof HEAT_DEFAULTS;
const WARMUP_CREATES_PER_MERCHANT = 2;
/** Sequential creates after the warm-up (not recorded): their mean latency is a create's alone. */
const SEQUENTIAL_CREATES = 40;
/** Quiet load, as for a merchant with one order a minute: creates far enough apart that each is alone in every stream and queue batch. */
const QUIET = { creates: 20, gapMs: 1_500 } as const;
/** Steady load with a webhook endpoint runs on merchants of its own: this share of the heat run's, each getting as many creates. */
const HOOKED_MERCHANT_SHARE = 1 / 5;

const USAGE = `Usage: npx tsx harness/bench/heat.ts [--merchants N] [--creates M] [--concurrency C] [--cancels K]
                                     [--doc [--baseline FILE --baseline-label TEXT]]

Partition heat and the cost of a create on a fresh local stack (its own emulators, free ports):
N merchants (default ${HEAT_DEFAULTS.merchants}) each get M creates (default ${HEAT_DEFAULTS.creates}; half with an
Idempotency-Key), C in flight (default ${HEAT_DEFAULTS.concurrency}), and K cancels each (default ${HEAT_DEFAULTS.cancels}).
Every AWS call of the functions is recorded (harness/recorders/write-recorder.ts); prints markdown tables, the
last one the cost per million orders at steady and quiet load, without and with a webhook endpoint.
--doc writes them into docs/data-model-heat.md (its generated section), after the output of a run on
another commit saved in FILE (--baseline) and named by TEXT (--baseline-label).`;

/** Where the section's lines go: the console alone, or the bench's report too. */
let print = (line: string) => console.log(line);

const table = (title: string, head: string, rows: (string | number)[][]) => {
  print(`\n### ${title}\n`);
  printTable(print, head, rows);
};
const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const percent = (value: number) => (Number.isFinite(value) ? `${(value * 100).toFixed(2)} %` : 'n/a');
const whole = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const dollars = (value: number) => (Number.isFinite(value) ? `$${value.toFixed(2)}` : 'n/a');

/** The seeded fixtures' order (two rows), with its own number and one of 50 buyers. */
const createBody = (orderNo: string, buyer: number) => ({
  ...fixtureOrder('HEAT', 1),
  order_no: orderNo,
  customer: { name: 'Heat Buyer', email: `buyer-${buyer % 50}@example.com` },
});

type Merchant = { id: string; token: string };

/** Drains what the live stage records until the workers have been quiet (no writes, no sends, no invocation) for `quietMs`; at most `maxMs`. */
const settle = async (stack: LocalStack, { quietMs = 4_000, maxMs = 90_000 } = {}) => {
  const record: WriteRecord = { records: [], invocations: [] };
  const start = Date.now();
  let lastActivity = Date.now();
  while (Date.now() - start < maxMs) {
    await sleep(1_000);
    const fresh = (await takeWriteRecord(stack)).live;
    record.records.push(...fresh.records);
    record.invocations.push(...fresh.invocations);
    if (fresh.invocations.length > 0 || fresh.records.some((call) => (call.writes?.length ?? 0) > 0 || (call.messages ?? 0) > 0))
      lastActivity = Date.now();
    if (Date.now() - lastActivity >= quietMs) break;
  }
  return { record, seconds: (Date.now() - start) / 1000 };
};

/** Each merchant's stored bytes (table and indexes, weighted by how long each item is kept), from a Scan of the table. */
const storedByMerchant = async (client: DynamoDBClient, table: string) => {
  const now = Date.now() / 1000;
  const byMerchant = new Map<string, Stored>();
  for await (const page of paginateScan({ client }, { TableName: table }))
    for (const item of page.Items ?? []) {
      // Every item of the table lives under its merchant's `M#<merchantId>` (shared/db/entities/base.ts).
      const merchant = /^M#([^#]+)/.exec(item.pk?.S ?? '')?.[1];
      if (merchant === undefined) continue;
      const { tableByteMonths, indexByteMonths } = storedItem(item, now);
      const was = byMerchant.get(merchant);
      byMerchant.set(merchant, {
        tableByteMonths: (was?.tableByteMonths ?? 0) + tableByteMonths,
        indexByteMonths: (was?.indexByteMonths ?? 0) + indexByteMonths,
      });
    }
  return byMerchant;
};

const meanCreateMs = (invocations: readonly InvocationRecord[]) =>
  mean(invocations.flatMap((invocation) => (invocation.fn === 'orders-create' ? [invocation.ms] : [])));

/** A function's memory and trigger, from the manifests the stack is built from (lib/function-specs.ts). */
const SPECS = new Map(
  functionSpecs().map((spec) => {
    const trigger: Trigger = spec.kind === 'route' ? 'api' : spec.worker.trigger.kind === 'queue' ? 'queue' : 'stream';
    return [spec.id, { memoryMb: spec.memoryMb, trigger }];
  }),
);

/** One scenario's counts: what the cost model prices, and what the counts table shows beside it. */
const scenarioOf = (
  label: string,
  load: ScenarioMeasure['load'],
  run: WriteRecord,
  orders: number,
  stored: Stored,
  aloneCreateMs: number,
  functionNames: readonly string[],
) => {
  const createMs = meanCreateMs(run.invocations);
  // Loaded durations are divided by how much slower a create ran than alone; with no creates to compare (a failed scenario), taken as measured.
  const contention = createMs > 0 && aloneCreateMs > 0 ? Math.max(1, createMs / aloneCreateMs) : 1;
  const functions = functionNames.map((fn) => {
    const mine = run.invocations.filter((invocation) => invocation.fn === fn);
    const durations = mine.map((invocation) => invocation.ms);
    const spec = SPECS.get(fn);
    return {
      fn,
      memoryMb: spec?.memoryMb ?? 256,
      trigger: spec?.trigger ?? 'api',
      invocations: mine.length,
      billedMs: billedMs(durations, contention),
      logBytes: sum(mine, (invocation) => invocation.logBytes),
      /** The mean measured duration (ms): the counts table shows it beside the billed one. */
      meanMs: mean(durations),
    };
  });
  const calls = (service: CallRecord['service']) => run.records.filter((call) => call.service === service);
  return {
    label,
    contention,
    createMs,
    aloneCreateMs,
    measure: {
      load,
      orders,
      apiRequests: sum(functions, (use) => (use.trigger === 'api' ? use.invocations : 0)),
      functions,
      sqsRequests: sum(calls('sqs'), (call) => call.attempts * (call.bytes === undefined ? 1 : sqsRequestsFor(call.bytes))),
      writeUnits: sum(calls('dynamodb'), (call) => call.wcu ?? 0),
      writeUnitsByFeature: unitsByFeature(calls('dynamodb')),
      readUnits: sum(calls('dynamodb'), (call) => call.rcu ?? 0),
      emails: sum(calls('ses'), (call) => (call.ok ? (call.messages ?? 0) : 0)),
      // The cost model divides totals by the orders: the stored bytes per order, times the orders.
      stored: { tableByteMonths: stored.tableByteMonths * orders, indexByteMonths: stored.indexByteMonths * orders },
    },
  };
};

const REQUEST_PATH = new Set(['orders-create', 'orders-cancel']);

/** The round trips one invocation waited for in turn: its DynamoDB calls grouped by overlap in time, plus each group's most retries. */
const sequentialRoundTrips = (calls: CallRecord[]): number => {
  const timed = calls.filter((call) => call.service === 'dynamodb' && call.span).sort((a, b) => (a.span?.[0] ?? 0) - (b.span?.[0] ?? 0));
  if (timed.length === 0) return NaN;
  let trips = 0;
  let groupEnd = Number.NEGATIVE_INFINITY;
  let groupRetries = 0;
  for (const call of timed) {
    const [start, end] = call.span as [number, number];
    if (start >= groupEnd) {
      trips += 1 + groupRetries;
      groupRetries = 0;
      groupEnd = end;
    } else groupEnd = Math.max(groupEnd, end);
    groupRetries = Math.max(groupRetries, call.attempts - 1);
  }
  return trips + groupRetries;
};

/** A key as the table shows it: merchant ids, uuids, sequence and block numbers, e-mails and order numbers replaced. */
const normalise = (text: string, merchantIds: string[]) =>
  merchantIds
    .reduce((out, id) => out.replaceAll(id, '<merchant>'), text)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/[^#\s]+@[^#\s]+/g, '<email>')
    .replace(/HEAT-[A-Za-z0-9-]+/g, '<order_no>')
    .replace(/heat-[a-z0-9]+-\d+/g, '<idempotency-key>')
    .replace(/\d{4,}/g, '<n>');

/** A table partition whose sort key only grows (the event log's positions): every write lands at its end, which no split relieves. */
const growsAtTheEnd = (key: string) => key.endsWith('#EVENTS');

/** Heat units: a table item (never split), a table partition (split by sort key, but for the event log's), an index partition (never split). */
const heatOf = (calls: CallRecord[], merchantIds: string[]) => {
  const writes = calls.flatMap((call) => call.writes ?? []);
  const hits = writes.flatMap(({ where, key, sk, wcu }) => {
    const hit = (unit: string, raw: string, splits: string) => ({ unit, where, raw, wcu, splits });
    if (where !== 'table') return [hit(`${where}:${key}`, key, 'no (monotonic sort key)')];
    const item = hit(`item:${key}\u0000${sk}`, `${key} / ${sk}`, 'no (one item)');
    if (growsAtTheEnd(key)) return [item, hit(`log:${key}`, `${key} (whole log)`, 'no (monotonic sort key)')];
    return [item, hit(`partition:${key}`, `${key} (whole partition)`, 'yes (by sort key)')];
  });
  const units = [...groupBy(hits, (hit) => hit.unit).values()].map((group) => {
    const { unit, where, raw, splits } = group[0] as (typeof hits)[number];
    const merchant = merchantIds.find((id) => raw.includes(id));
    return { unit, where, label: normalise(raw, merchantIds), merchant, writes: group.length, wcu: sum(group, (hit) => hit.wcu), splits };
  });
  return { units, total: writes.length };
};

type KeyHeat = ReturnType<typeof heatOf>['units'][number];

/** What a write serves: the event log and the commission reports state their own share of a create's writes. */
const FEATURES = { orders: 'orders, commissions, quota', log: 'event log', reports: 'commission reports', webhooks: 'webhooks' } as const;
const featureOf = ({ key, sk = '' }: Pick<PartitionWrite, 'key' | 'sk'>): string => {
  if (growsAtTheEnd(key)) return FEATURES.log;
  if (key.includes('#TOTALS')) return FEATURES.reports;
  // Deliveries, parked deliveries and endpoints in the merchant's partition; the delivery lists on the indexes.
  if (key.includes('#WEBHOOK') || /^(WH|WEBHOOK)/.test(sk)) return FEATURES.webhooks;
  return FEATURES.orders;
};

/** Write units by what they serve, each call's shared out over the items it wrote (a call's own figure when it names none). */
const unitsByFeature = (calls: readonly CallRecord[]): Record<string, number> => {
  const shares = calls.flatMap((call) =>
    call.writes?.length
      ? call.writes.map((write) => ({ feature: featureOf(write), wcu: write.wcu }))
      : [{ feature: FEATURES.orders, wcu: call.wcu || 0 }],
  );
  // Every feature in every scenario (0 where it wrote nothing), so the cost table has the same rows for all.
  const features = Object.values(FEATURES).sort((a, b) => a.localeCompare(b));
  return Object.fromEntries(features.map((feature) => [feature, sum(shares, (share) => (share.feature === feature ? share.wcu : 0))]));
};

/** Every write of the creates by the item it wrote (normalised): per create, who writes it and what it serves, and each feature's total. */
const writesByItem = (calls: CallRecord[], merchantIds: string[], creates: number) => {
  const writes = calls.flatMap((call) => (call.writes ?? []).map((write) => ({ ...write, fn: call.fn })));
  const itemOf = (write: PartitionWrite) =>
    normalise(write.where === 'table' ? `${write.key} / ${write.sk ?? ''}` : write.key, merchantIds)
      .replace(/\d{4}-\d{2}(-\d{2})?/g, '<date>')
      .replace(/#[0-9a-z]{20,}/gi, '#<id>');
  const all = [...groupBy(writes, (write) => `${write.where}\u0000${itemOf(write)}`).values()].map((group) => {
    const first = group[0] as (typeof writes)[number];
    const fns = new Set(group.map((write) => write.fn));
    return {
      feature: featureOf(first),
      where: first.where,
      label: itemOf(first),
      fns,
      writes: group.length / creates,
      wcu: sum(group, (write) => write.wcu) / creates,
    };
  });
  const features = [...new Set(all.map((row) => row.feature))].map((feature) => ({
    feature,
    wcu: sum(all, (row) => (row.feature === feature ? row.wcu : 0)),
  }));
  return { rows: all.sort((a, b) => a.feature.localeCompare(b.feature) || b.wcu - a.wcu), features };
};

/** A quantity as the cost table shows it: whole from 100, two decimals from 1, two significant digits below. */
const amount = (value: number) =>
  !Number.isFinite(value) ? 'n/a' : value === 0 ? '0' : value >= 100 ? whole(value) : value >= 1 ? fixed(value) : value.toPrecision(2);
const cents = (value: number) => (Number.isFinite(value) ? `$${value.toFixed(value !== 0 && Math.abs(value) < 0.01 ? 4 : 2)}` : 'n/a');

type Scenario = ReturnType<typeof scenarioOf>;

const perOrder = (scenario: Scenario, total: number) => total / Math.max(1, scenario.measure.orders);
type Use = Scenario['measure']['functions'][number];
const useOf = (scenario: Scenario, fn: string) => scenario.measure.functions.find((use) => use.fn === fn);

/** The scenarios, and the per-order counts of each that the cost table prices. */
const printCounts = (
  scenarios: Scenario[],
  run: { steadyOrders: number; hookedMerchants: number; merchants: number; creates: number; concurrency: number },
) => {
  const functionNames = scenarios[0]?.measure.functions.map((use) => use.fn) ?? [];
  const row = (label: string, cell: (scenario: Scenario) => string) => [label, ...scenarios.map(cell)];
  /** A function's figure per invocation, '-' in a scenario where it did not run. */
  const perInvocation = (fn: string, cell: (use: Use) => string) => (scenario: Scenario) => {
    const use = useOf(scenario, fn);
    return use && use.invocations > 0 ? cell(use) : '-';
  };
  print(
    `\nScenarios: **steady**: the ${whole(run.steadyOrders)} creates above (${run.concurrency} in flight over ${run.merchants} merchants), before their cancels; **steady + webhook**: ${whole(run.creates)} creates on each of ${run.hookedMerchants} more merchants, ${run.concurrency} in flight, each merchant with one endpoint subscribed to every event (a receiver on loopback answering 204); **quiet** and **quiet + webhook**: ${QUIET.creates} creates ${QUIET.gapMs / 1000} s apart on one merchant (each alone in every stream and queue batch, as at one order a minute), without and with such an endpoint. Half of every scenario's creates carry an Idempotency-Key. Everything the scenario's creates set off is counted, until the workers are done.`,
  );
  table(
    'Cost per million orders: the measured counts behind it (per order unless said)',
    ['count', ...scenarios.map((scenario) => scenario.label)].join(' | '),
    [
      row('orders created (201)', (scenario) => whole(scenario.measure.orders)),
      row('API requests (WAF and API Gateway)', (scenario) => fixed(perOrder(scenario, scenario.measure.apiRequests))),
      row(
        "orders-create mean duration here / alone (the quiet scenarios' creates): the divisor of every duration (at least 1)",
        (scenario) => `${fixed(scenario.createMs, 1)} / ${fixed(scenario.aloneCreateMs, 1)} ms: ÷ ${fixed(scenario.contention)}`,
      ),
      ...functionNames.flatMap((fn) => [
        row(`${fn}: invocations`, (scenario) => fixed(perOrder(scenario, useOf(scenario, fn)?.invocations ?? 0), 3)),
        row(
          `${fn}: mean duration measured -> billed (÷ divisor, rounded up to the ms)`,
          perInvocation(fn, (use) => `${fixed(use.meanMs, 1)} -> ${fixed(use.billedMs / use.invocations, 1)} ms`),
        ),
        row(
          `${fn}: bytes logged per invocation`,
          perInvocation(fn, (use) => whole(use.logBytes / use.invocations)),
        ),
      ]),
      row('SQS requests by the functions (sends; 64 KB chunks)', (scenario) => fixed(perOrder(scenario, scenario.measure.sqsRequests))),
      row('DynamoDB write / read request units', (scenario) =>
        [scenario.measure.writeUnits, scenario.measure.readUnits].map((value) => fixed(perOrder(scenario, value))).join(' / '),
      ),
      row('SES e-mails', (scenario) => fixed(perOrder(scenario, scenario.measure.emails))),
      row('stored, table / indexes (bytes x share of a month kept; items + 100 bytes each)', (scenario) =>
        [scenario.measure.stored.tableByteMonths, scenario.measure.stored.indexByteMonths]
          .map((value) => whole(perOrder(scenario, value)))
          .join(' / '),
      ),
    ],
  );
};

/** The cost table (a row per line of the model, a cell its dollars and the per-order quantity they price) and the fixed monthly costs. */
const printCostTables = (scenarios: Scenario[]) => {
  const lines = scenarios.map((scenario) => costLines(scenario.measure, DEPLOYMENT));
  const items = lines[0] ?? [];
  const cell = (line: CostLine | undefined) => (line ? `${cents(line.dollars)} (${amount(line.quantity)} ${line.unit})` : '-');
  const cells = (item: string) => lines.map((scenarioLines) => cell(scenarioLines.find((line) => line.item === item)));
  const totals = (perMonth: boolean) =>
    lines.map((scenarioLines) => sum(scenarioLines, (line) => (line.perMonth === perMonth ? line.dollars : 0)));
  const laterFeatures = [FEATURES.log, FEATURES.reports].map(writeUnitsItem);
  table(
    `Cost per million orders, all in, at list prices (${PRICES.region}, on demand, no free tier, as of ${PRICES.date}; harness/bench/cost.ts, docs/data-model-heat.md)`,
    ['item', 'price', ...scenarios.map((scenario) => scenario.label)].join(' | '),
    [
      ...items.filter((line) => !line.perMonth).map((line) => [line.item, line.price, ...cells(line.item)]),
      ['**total per million orders**', '', ...totals(false).map((total) => `**${dollars(total)}**`)],
      [
        `total less the write units of the ${FEATURES.log} and the ${FEATURES.reports} (their other costs, the change feed's time included, stay in)`,
        '',
        ...totals(false).map((total, index) => {
          const later = (lines[index] ?? []).filter((line) => laterFeatures.includes(line.item));
          return dollars(total - sum(later, (line) => line.dollars));
        }),
      ],
      ...items
        .filter((line) => line.perMonth)
        .map((line) => [`${line.item}, per month a million orders are kept`, line.price, ...cells(line.item)]),
      ['**storage, per month a million orders are kept**', '', ...totals(true).map((total) => `**${dollars(total)}**`)],
    ],
  );
  const fixedLines = fixedMonthlyLines(DEPLOYMENT);
  table('What a stage costs a month whatever its orders (each stage, live and sandbox)', 'item | price | per month | dollars', [
    ...fixedLines.map((line) => [line.item, line.price, `${amount(line.quantity)} ${line.unit}`, cents(line.dollars)]),
    ['**total**', '', '', `**${dollars(sum(fixedLines, (line) => line.dollars))}**`],
  ]);
};

/** What the cost model assumes, with what a real webhook endpoint's answer time would add (the deliverer waits for it). */
const printAssumptions = (scenarios: Scenario[]) => {
  const hooked = scenarios.find((scenario) => scenario.label === 'steady + webhook');
  // Both lanes' deliverers: an endpoint's first deliveries, before it has answered promptly, are on the slow lane.
  const deliverers = hooked ? ['webhooks-deliver', 'webhooks-deliver-slow'].flatMap((fn) => useOf(hooked, fn) ?? []) : [];
  const invocations = sum(deliverers, (use) => use.invocations);
  const deliveries = hooked ? perOrder(hooked, invocations) : 0;
  const deliverMb = deliverers[0]?.memoryMb ?? 0;
  print(
    `\nAssumed, not measured: durations are the stage process's (every function of the stage in one Node.js process beside the emulators), divided by how much slower a create ran in the scenario than alone; Lambda's init (cold start) is not counted. The webhook receiver answers at once on loopback: each 100 ms a real endpoint takes to answer adds ${cents(1_000_000 * deliveries * 0.1 * (deliverMb / 1024) * PRICES.lambdaArmPerGbSecond)} per million orders at steady load (${fixed(deliveries)} deliveries per order). The local pollers form batches as they find the records (the stream polled 4 times a second, no batching window), so at steady load the change feed and the commission consumer may run more, smaller batches than in AWS. Not counted: data transfer out, CloudWatch metrics, alarms and dashboard, KMS, Secrets Manager API calls, free tiers.`,
  );
};

/** The run's merchants (the measured ones, those with a webhook endpoint, the two quiet ones) and how to send each a create. */
const setUpRun = async (stack: LocalStack, opts: HeatOptions, storage: DynamoDBClient, hooksUrl: string) => {
  const live = stack.stages.live;
  const measuredKeys = Array.from({ length: opts.merchants }, (_, index) => `heat-${index}`);
  const hookedKeys = Array.from(
    { length: Math.max(1, Math.ceil(opts.merchants * HOOKED_MERCHANT_SHARE)) },
    (_, index) => `heat-hooked-${index}`,
  );
  const merchantOf = await seedMerchants(
    stack,
    [...measuredKeys, ...hookedKeys, 'heat-quiet', 'heat-quiet-hooked'].map((key) => benchMerchant(key, `Heat merchant ${key}`)),
  );
  const merchants = measuredKeys.map(merchantOf);
  const hooked = hookedKeys.map(merchantOf);
  const quiet = merchantOf('heat-quiet');
  const quietHooked = merchantOf('heat-quiet-hooked');
  const scan = () => storedByMerchant(storage, live.table);
  // One endpoint per merchant of the webhook scenarios, subscribed to every event type.
  for (const merchant of [...hooked, quietHooked]) await createEndpoint(live.url, merchant.token, hooksUrl, WEBHOOK_EVENT_TYPES);
  // What the merchants hold before their first order (the seed, the endpoints): not the orders'.
  const storedBefore = await scan();
  const createUrl = `${live.url}/api/v2/orders/create`;
  const run = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  let serial = 0;
  /** Orders each merchant took (201), warm-up included: what its stored bytes are divided by. */
  const ordersOn = new Map<string, number>();
  const create = (merchant: Merchant, withKey: boolean) => () => {
    const number = serial++;
    return send(createUrl, merchant.token, {
      method: 'POST',
      // A merchant's orders go to a new customer each round (50 in turn), not all to one.
      body: createBody(`HEAT-${run}-${number}`, Math.floor(number / opts.merchants)),
      idempotencyKey: withKey ? `heat-${run}-${number}` : undefined,
    }).then((reply) => {
      if (reply.status === 201) ordersOn.set(merchant.id, (ordersOn.get(merchant.id) ?? 0) + 1);
      return { ...reply, merchant };
    });
  };
  /** `perMerchant` creates on each merchant of `group`, interleaved, every other round with an Idempotency-Key. */
  const rounds = (group: readonly Merchant[], perMerchant: number) =>
    Array.from({ length: perMerchant * group.length }, (_, index) =>
      create(group[index % group.length] as Merchant, Math.floor(index / group.length) % 2 === 0),
    );
  /** What `group` stored per order it took: its bytes in `now` (a scan) less its bytes before its first order. */
  const storedPerOrder = (now: Map<string, Stored>, group: readonly Merchant[]): Stored => {
    const orders = sum(group, ({ id }) => ordersOn.get(id) ?? 0);
    const delta = (key: keyof Stored) =>
      sum(group, ({ id }) => (now.get(id)?.[key] ?? 0) - (storedBefore.get(id)?.[key] ?? 0)) / Math.max(1, orders);
    return { tableByteMonths: delta('tableByteMonths'), indexByteMonths: delta('indexByteMonths') };
  };
  const merchantIds = merchants.map((merchant) => merchant.id);
  return { live, merchants, hooked, quiet, quietHooked, merchantIds, scan, storedPerOrder, create, rounds };
};

type HeatRun = Awaited<ReturnType<typeof setUpRun>>;

/** Warm-up (auth caches, the emulator's JIT, each merchant's first block), not recorded; then a create's latency alone. */
const warmUp = async (stack: LocalStack, run: HeatRun, opts: HeatOptions) => {
  const { merchants, create } = run;
  const others = [...run.hooked, run.quiet, run.quietHooked];
  await pool(
    [
      ...Array.from({ length: WARMUP_CREATES_PER_MERCHANT * opts.merchants }, (_, index) =>
        create(merchants[index % opts.merchants] as Merchant, index % 2 === 0),
      ),
      ...others.map((merchant) => create(merchant, false)),
    ],
    opts.concurrency,
  );
  // A Lambda serves one invocation at a time: a create's latency alone is taken from sequential creates.
  const sequential: Reply[] = [];
  for (let index = 0; index < SEQUENTIAL_CREATES; index++)
    sequential.push(await create(merchants[index % opts.merchants] as Merchant, index % 2 === 0)());
  const timed = sequential.filter((reply) => reply.status === 201);
  await settle(stack, { quietMs: 2_000, maxMs: 30_000 });
  return { timed: timed.length, ms: mean(timed.map((reply) => reply.ms)) };
};

/** The measured run: creates interleaved over the merchants, then (once the workers are done with them) the cancels. */
const steadyRun = async (stack: LocalStack, run: HeatRun, opts: HeatOptions) => {
  const { merchants } = run;
  const startedAt = performance.now();
  const creates = await pool(run.rounds(merchants, opts.creates), opts.concurrency);
  const createWall = (performance.now() - startedAt) / 1000;
  const { record: steady, seconds: createSettleSeconds } = await settle(stack);
  const steadyStored = run.storedPerOrder(await run.scan(), merchants);
  const created = creates.filter((reply) => reply.status === 201);
  const cancel =
    ({ merchant, body }: (typeof created)[number]) =>
    () => {
      const uuid = (body as { data?: { order?: { uuid?: string } } }).data?.order?.uuid ?? '';
      return send(`${run.live.url}/api/v2/orders/${uuid}/cancel`, merchant.token, { method: 'POST', body: {} });
    };
  const toCancel = merchants.flatMap((merchant) => created.filter((reply) => reply.merchant === merchant).slice(0, opts.cancels));
  const cancels = await pool(toCancel.map(cancel), opts.concurrency);
  const { record: cancelled, seconds: settleSeconds } = await settle(stack);
  return {
    steady,
    steadyStored,
    creates,
    created,
    cancels,
    createWall,
    createSettleSeconds,
    settleSeconds,
    records: [...steady.records, ...cancelled.records],
    windowSeconds: (performance.now() - startedAt) / 1000,
  };
};

type SteadyRun = Awaited<ReturnType<typeof steadyRun>>;

/** The run in one paragraph: what was answered, how fast, how long the workers took. */
const printRun = (measured: SteadyRun, alone: { timed: number; ms: number }, opts: HeatOptions, sandboxCalls: number) => {
  const { created, createWall } = measured;
  const meanCreateMs = mean(created.map((reply) => reply.ms));
  const sortedMs = created.map((reply) => reply.ms).sort((a, b) => a - b);
  const p50 = sortedMs[Math.floor(sortedMs.length / 2)] ?? NaN;
  print(
    `\nCreates: ${statusCount(measured.creates)} in ${createWall.toFixed(1)} s (${fixed(created.length / createWall, 1)} orders/s; latency at ${opts.concurrency} in flight: mean ${fixed(meanCreateMs, 1)} ms, p50 ${fixed(p50, 1)} ms; ${alone.timed} sequential creates before the run: mean ${fixed(alone.ms, 1)} ms). Cancels: ${statusCount(measured.cancels)}. Workers settled ${measured.createSettleSeconds.toFixed(0)} s after the last create and ${measured.settleSeconds.toFixed(0)} s after the last cancel. Calls recorded: ${measured.records.length.toLocaleString('en-US')} (live), ${sandboxCalls} (sandbox).`,
  );
};

/** What a create costs, per function: the request path with and without a key, a cancel, each worker per create. */
const printCreateCosts = ({ records, cancels, created }: SteadyRun) => {
  const createCount = created.length;
  const byInvocation = groupBy(records, (call) => call.invocation);
  const invocationsOf = (fn: string) => [...byInvocation.values()].filter((calls) => calls[0]?.fn === fn);
  const createInvocations = invocationsOf('orders-create');
  const withKey = createInvocations.filter((calls) =>
    calls.some((call) => call.writes?.some((write) => write.sk?.startsWith('IDEMPOTENCY#'))),
  );
  const withoutKey = createInvocations.filter((calls) => !withKey.includes(calls));
  const perInvocation = (label: string, invocations: CallRecord[][], per: number, unit: string, sequential = false) => {
    const calls = invocations.flat();
    const dynamo = calls.filter((call) => call.service === 'dynamodb');
    const estimated = dynamo.filter((call) => !call.measured).length;
    const perUnit = (of: (call: CallRecord) => number) => fixed(sum(dynamo, of) / per);
    return [
      label,
      `${whole(per)} ${unit}`,
      fixed(dynamo.length / per),
      perUnit((call) => call.attempts),
      sequential ? fixed(sum(invocations, sequentialRoundTrips) / Math.max(1, invocations.length)) : '',
      perUnit((call) => call.writes?.length ?? 0),
      perUnit((call) => call.wcu ?? 0),
      perUnit((call) => call.rcu ?? 0),
      fixed(sum(calls, (call) => (call.service === 'sqs' ? call.attempts : 0)) / per),
      estimated === 0 ? 'measured' : `${estimated} of ${dynamo.length} calls estimated`,
    ];
  };
  const workerFns = [...new Set(records.map((call) => call.fn))].sort().filter((fn) => !REQUEST_PATH.has(fn));
  const cancelled = cancels.filter((reply) => reply.status === 200).length;
  table(
    'What a create costs (DynamoDB calls, round trips incl. SDK retries, of them one after the other, partition writes, write/read units, SQS requests)',
    'path | over | DynamoDB calls | round trips | sequential round trips (request path) | partition writes | WCU | RCU | SQS requests | units',
    [
      perInvocation('create (request path), no Idempotency-Key', withoutKey, withoutKey.length, 'creates', true),
      perInvocation('create (request path), with Idempotency-Key', withKey, withKey.length, 'creates', true),
      perInvocation('create (request path), as sent (half with a key)', createInvocations, createInvocations.length, 'creates', true),
      perInvocation('cancel (request path)', invocationsOf('orders-cancel'), cancelled, 'cancels', true),
      ...workerFns.map((fn) => perInvocation(`${fn} (worker), per create`, invocationsOf(fn), createCount, 'creates')),
      perInvocation('everything recorded, per create', [...byInvocation.values()], createCount, 'creates'),
    ],
  );
  const operations = [...groupBy(createInvocations.flat(), (call) => `${call.service}.${call.operation}`)].sort(
    (a, b) => b[1].length - a[1].length,
  );
  print(
    `\nCalls of a create (request path, per create): ${operations
      .map(([operation, calls]) => `${operation} ${fixed(calls.length / Math.max(1, createInvocations.length))}`)
      .join(', ')}.`,
  );
};

/** The writes of a create, item by item (the steady creates, before their cancels). */
const printWritesByItem = ({ steady, created }: SteadyRun, merchantIds: string[]) => {
  const byItem = writesByItem(steady.records, merchantIds, created.length);
  table(
    `The writes of a create, by item (${whole(created.length)} creates; WCU per create by feature: ${byItem.features
      .map((feature) => `${feature.feature} ${fixed(feature.wcu)}`)
      .join(', ')})`,
    'feature | item (normalised) | where | written by | writes per create | WCU per create',
    byItem.rows
      .filter((row) => row.wcu >= 0.005)
      .map((row) => [row.feature, `\`${row.label}\``, row.where, [...row.fns].sort().join(', '), fixed(row.writes), fixed(row.wcu)]),
  );
};

/** The reads a create sets off, by function, call and item (the steady creates, before their cancels): what its read units pay for. */
const printReadsByItem = ({ steady, created }: SteadyRun, merchantIds: string[]) => {
  const reads = steady.records.filter((call) => call.readItem !== undefined);
  const groups = groupBy(
    reads,
    (call) => `${call.fn}\u0000${call.operation}\u0000${call.consistent}\u0000${normalise(call.readItem ?? '', merchantIds)}`,
  );
  const rows = [...groups.values()]
    .map((calls) => ({ calls, rcu: sum(calls, (call) => call.rcu ?? 0) }))
    .sort((a, b) => b.rcu - a.rcu)
    .filter((row) => row.rcu / Math.max(1, created.length) >= 0.005);
  table(
    `The reads of a create, by item (${whole(created.length)} creates; RCU per create ${fixed(sum(reads, (call) => call.rcu ?? 0) / Math.max(1, created.length))})`,
    'read by | call | consistent | item or key condition (normalised) | calls per create | RCU per create',
    rows.map(({ calls, rcu }) => {
      const first = calls[0] as CallRecord;
      const per = (value: number) => fixed(value / Math.max(1, created.length));
      return [
        first.fn,
        first.operation,
        first.consistent ? 'yes' : 'no',
        `\`${normalise(first.readItem ?? '', merchantIds)}\``,
        per(calls.length),
        per(rcu),
      ];
    }),
  );
};

/** Keys of one shape (normalised label and where) as one group, with its hottest key (the first of the hottest); hottest group first. */
const groupedByShape = (units: readonly KeyHeat[]) =>
  [...groupBy(units, (unit) => `${unit.where}\u0000${unit.label}`).values()]
    .map((group) => {
      const top = group.reduce((hottest, unit) => (unit.writes > hottest.writes ? unit : hottest));
      return { where: top.where, label: top.label, shared: top.merchant === undefined, keys: group.length, top, splits: top.splits };
    })
    .sort((a, b) => b.top.writes - a.top.writes);

/** Partition heat: a create's own writes and the workers' for it (a cancel's are its own row above), the 10 hottest key shapes. */
const printHeat = (measured: SteadyRun, merchantIds: string[], merchants: number) => {
  const { created } = measured;
  const { units, total } = heatOf(measured.steady.records, merchantIds);
  const createsOf = (unit: KeyHeat) =>
    unit.merchant ? created.filter((reply) => reply.merchant.id === unit.merchant).length : created.length;
  const ranked = groupedByShape(units);
  const wholePartition = ranked.find((group) => group.label.endsWith('(whole partition)'));
  const heatRows = ranked
    .filter((group) => !group.label.endsWith('(whole partition)') || group === wholePartition)
    .slice(0, 10)
    .map((group) => {
      const perCreate = createsOf(group.top);
      return [
        `\`${group.label}\``,
        group.where,
        group.shared ? '**yes**' : 'no (one merchant)',
        whole(group.keys),
        whole(group.top.writes),
        percent(group.top.writes / total),
        fixed(group.top.writes / perCreate),
        fixed(group.top.wcu / perCreate),
        group.splits,
        group.splits.startsWith('yes')
          ? 'n/a (splits)'
          : `${whole(PARTITION_WCU_PER_SECOND / (group.top.wcu / perCreate))} ${group.shared ? 'for the whole service' : 'per merchant'}`,
      ];
    });
  table(
    `Partition heat: the ${Math.min(10, ranked.length)} hottest keys of ${whole(total)} partition writes (${whole(created.length)} creates over ${merchants} merchants and the workers' writes for them)`,
    'key (normalised) | where | shared by all merchants | keys like it | writes (hottest one) | share of all writes | writes per create on it | WCU per create on it | split for heat | creates/s at 1,000 WCU/s on it',
    heatRows,
  );
  printCeilings(measured, units, total, createsOf, merchantIds, merchants);
};

/** The goal and the ceilings: the largest share one key takes, the per-merchant and service-wide create rates the hottest keys allow. */
const printCeilings = (
  { records, windowSeconds, created }: SteadyRun,
  units: readonly KeyHeat[],
  total: number,
  createsOf: (unit: KeyHeat) => number,
  merchantIds: string[],
  merchants: number,
) => {
  const unsplittable = units.filter((unit) => !unit.splits.startsWith('yes'));
  const hottest = [...units].sort((a, b) => b.writes - a.writes)[0];
  const hottestMerchantKey = unsplittable
    .filter((unit) => unit.merchant !== undefined)
    .sort((a, b) => b.wcu / createsOf(b) - a.wcu / createsOf(a))[0];
  const hottestShared = unsplittable.filter((unit) => unit.merchant === undefined).sort((a, b) => b.wcu - a.wcu)[0];
  const merchantWcuPerCreate = hottestMerchantKey ? hottestMerchantKey.wcu / createsOf(hottestMerchantKey) : NaN;
  const sharedWcuPerCreate = hottestShared ? hottestShared.wcu / created.length : NaN;
  // Reads: the hottest read partition shared by all merchants (3,000 RCU/s a partition).
  const readHeat = new Map<string, number>();
  for (const call of records)
    for (const key of call.reads ?? [])
      readHeat.set(key, (readHeat.get(key) ?? 0) + (call.rcu ?? 0) / Math.max(1, call.reads?.length ?? 1));
  const sharedReads = [...readHeat].filter(([key]) => !merchantIds.some((id) => key.includes(id))).sort((a, b) => b[1] - a[1]);
  const [sharedReadKey, sharedRead] = sharedReads[0] ?? [undefined, 0];
  table("Heat against DynamoDB's limits (1,000 WCU/s and 3,000 RCU/s per partition)", 'measure | measured | goal / limit', [
    [
      'largest share of all writes taken by one key',
      hottest ? `${percent(hottest.writes / total)} (\`${hottest.label}\`, ${hottest.where})` : 'n/a',
      `about 1/${merchants} = ${percent(1 / merchants)}`,
    ],
    [
      'per-merchant creates/s at which its hottest key reaches 1,000 WCU/s',
      hottestMerchantKey
        ? `${whole(PARTITION_WCU_PER_SECOND / merchantWcuPerCreate)} creates/s (\`${hottestMerchantKey.label}\`, ${hottestMerchantKey.where}: ${fixed(merchantWcuPerCreate)} WCU per create)`
        : 'n/a',
      'the documented per-merchant ceiling',
    ],
    [
      'service-wide creates/s at which the hottest shared key reaches 1,000 WCU/s',
      hottestShared
        ? `${whole(PARTITION_WCU_PER_SECOND / sharedWcuPerCreate)} creates/s (\`${hottestShared.label}\`, ${hottestShared.where}: ${fixed(sharedWcuPerCreate)} WCU per create)`
        : 'none: no key is shared by all merchants',
      'no shared key (no service-wide cap)',
    ],
    [
      'hottest read partition shared by all merchants',
      sharedReadKey
        ? `\`${normalise(sharedReadKey, merchantIds)}\`: ${fixed(sharedRead, 1)} RCU in the ${windowSeconds.toFixed(0)} s recorded, ${fixed(sharedRead / windowSeconds, 2)} RCU/s (polls: per tick, not per create)`
        : 'none',
      `${whole(PARTITION_RCU_PER_SECOND)} RCU/s a partition`,
    ],
  ]);
};

/** Creates one at a time on one merchant, QUIET.gapMs apart, and what the stage did for them. */
const quietRun = async (stack: LocalStack, run: HeatRun, merchant: Merchant) => {
  const replies: Reply[] = [];
  for (let index = 0; index < QUIET.creates; index++) {
    const sentAt = performance.now();
    replies.push(await run.create(merchant, index % 2 === 0)());
    await sleep(Math.max(0, QUIET.gapMs - (performance.now() - sentAt)));
  }
  const { record: into } = await settle(stack, { quietMs: 3_000 });
  return { into, orders: replies.filter((reply) => reply.status === 201).length };
};

const DEPLOYMENT: Deployment = {
  apiTraceRate: TRACE_SAMPLING_RATE,
  wafRules: WAF_RULES.length,
  logRetentionDays: STAGE_DEFAULTS.live.logRetentionDays,
  consumedQueues: queueWorkers().length,
  workerFunctions: workerDefs.length,
  traceWorkers: DEFAULT_TRACE_WORKERS,
  systemLogLevel: FUNCTION_LOGGING.systemLogLevelV2,
  secrets: 1,
};

/** The steady run's measures for the cost model beside the other scenarios', each run on merchants of its own. */
const costScenarios = async (stack: LocalStack, run: HeatRun, measured: SteadyRun, opts: HeatOptions) => {
  const hookedOrders = (await pool(run.rounds(run.hooked, opts.creates), opts.concurrency)).filter((reply) => reply.status === 201).length;
  const { record: steadyHooked } = await settle(stack);
  const quietAlone = await quietRun(stack, run, run.quiet);
  const quietWithHook = await quietRun(stack, run, run.quietHooked);
  const storedAfter = await run.scan();
  // A create alone: the mean of the quiet scenarios' creates, each the only invocation in the process when it ran.
  const aloneCreateMs = meanCreateMs([...quietAlone.into.invocations, ...quietWithHook.into.invocations]);
  const runs = [measured.steady, steadyHooked, quietAlone.into, quietWithHook.into];
  const triggerRank: Record<Trigger, number> = { api: 0, stream: 1, queue: 2 };
  const functionNames = [...new Set(runs.flatMap((one) => one.invocations.map((invocation) => invocation.fn)))].sort(
    (a, b) => triggerRank[SPECS.get(a)?.trigger ?? 'api'] - triggerRank[SPECS.get(b)?.trigger ?? 'api'] || a.localeCompare(b),
  );
  const scenario = (label: string, load: 'steady' | 'quiet', into: WriteRecord, orders: number, stored: Stored) =>
    scenarioOf(label, load, into, orders, stored, aloneCreateMs, functionNames);
  return [
    scenario('steady', 'steady', measured.steady, measured.created.length, measured.steadyStored),
    scenario('steady + webhook', 'steady', steadyHooked, hookedOrders, run.storedPerOrder(storedAfter, run.hooked)),
    scenario('quiet', 'quiet', quietAlone.into, quietAlone.orders, run.storedPerOrder(storedAfter, [run.quiet])),
    scenario('quiet + webhook', 'quiet', quietWithHook.into, quietWithHook.orders, run.storedPerOrder(storedAfter, [run.quietHooked])),
  ];
};

export const benchHeat = async (options: Partial<HeatOptions> & { print?: (line: string) => void } = {}) => {
  if (options.print) print = options.print;
  const opts = { ...HEAT_DEFAULTS, ...options };
  print(
    `\n## Partition heat and the cost of a create (${opts.merchants} merchants x ${opts.creates} creates, ${opts.concurrency} in flight, ${opts.cancels} cancel(s) each; ${new Date().toISOString()})`,
  );
  let stack: LocalStack | undefined;
  const hooks = await receiver(false);
  let storage: DynamoDBClient | undefined;
  try {
    stack = await startBenchStack({
      ...recordingEnv({ countLogs: true }),
      FOLLOW_UP_MIN_DELAY_SECONDS: '5',
      // The deployed functions' logs (Powertools' default level: lib/ sets none; EMF metrics on), counted (countLogs), not shown.
      POWERTOOLS_LOG_LEVEL: 'INFO',
      POWERTOOLS_METRICS_DISABLED: 'false',
    });
    storage = new DynamoDBClient({ endpoint: stack.endpoints.dynamodb, ...localClientConfig });
    const run = await setUpRun(stack, opts, storage, hooks.url);
    const alone = await warmUp(stack, run, opts);
    const measured = await steadyRun(stack, run, opts);
    printRun(measured, alone, opts, (await takeWriteRecord(stack)).sandbox.records.length);
    printCreateCosts(measured);
    printWritesByItem(measured, run.merchantIds);
    printReadsByItem(measured, run.merchantIds);
    printHeat(measured, run.merchantIds, opts.merchants);
    const scenarios = await costScenarios(stack, run, measured, opts);
    printCounts(scenarios, { ...opts, steadyOrders: measured.created.length, hookedMerchants: run.hooked.length });
    printCostTables(scenarios);
    printAssumptions(scenarios);
    return true;
  } catch (error) {
    print(`\npartition heat benchmark failed: ${(error as Error).stack ?? String(error)}`);
    return false;
  } finally {
    closeConnections();
    storage?.destroy();
    hooks.server.closeAllConnections();
    hooks.server.close();
    await stack?.stop();
  }
};

/** The marks around the section of docs/data-model-heat.md that `--doc` writes. */
const DOC_BEGIN = '<!-- heat:begin: written by `npx tsx harness/bench/heat.ts --doc`, not by hand -->';
const DOC_END = '<!-- heat:end -->';

/** Headings one level down, so a run's sections sit under the doc's own. */
const demote = (text: string) => text.replace(/^(#{2,5}) /gm, '#$1 ');

function writeDocSection(run: { lines: string[]; args: string[]; baseline?: { label: string; text: string } }) {
  const path = resolve(import.meta.dirname, '..', '..', 'docs', 'data-model-heat.md');
  const doc = readFileSync(path, 'utf8');
  const begin = doc.indexOf(DOC_BEGIN);
  const end = doc.indexOf(DOC_END);
  if (begin < 0 || end < begin) throw new Error(`docs/data-model-heat.md has no ${DOC_BEGIN} ... ${DOC_END} section`);
  const { commit: head, dirty } = benchCommit();
  const commit = head === '' ? 'unknown commit' : `${head}${dirty ? ' with uncommitted changes' : ''}`;
  const command = ['npx tsx harness/bench/heat.ts', ...run.args].join(' ');
  const section = [
    DOC_BEGIN,
    '',
    `\`${command}\`${run.baseline ? ', beside the same script run on the commit before (its output kept in a file)' : ''}.`,
    ...(run.baseline ? ['', `## Before: ${run.baseline.label}`, '', demote(run.baseline.text.trim())] : []),
    '',
    `## ${run.baseline ? 'After: ' : ''}${commit}`,
    '',
    demote(run.lines.join('\n').trim()),
    '',
    DOC_END,
  ].join('\n');
  writeFileSync(path, `${doc.slice(0, begin)}${section}${doc.slice(end + DOC_END.length)}`);
  console.log(`\nWrote the measured section of ${path}.`);
}

// Alone: see USAGE.
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    print(USAGE);
    process.exit(0);
  }
  const stringArg = (name: string) => {
    const index = args.indexOf(`--${name}`);
    return index < 0 ? undefined : args[index + 1];
  };
  const numberArg = (name: string, fallback: number) => {
    const index = args.indexOf(`--${name}`);
    const value = index < 0 ? fallback : Number(args[index + 1]);
    if (!Number.isInteger(value) || value < (name === 'cancels' ? 0 : 1)) {
      console.error(`--${name} takes a ${name === 'cancels' ? 'non-negative' : 'positive'} integer\n\n${USAGE}`);
      process.exit(2);
    }
    return value;
  };
  const lines: string[] = [];
  const result = await benchHeat({
    ...Object.fromEntries(Object.entries(HEAT_DEFAULTS).map(([name, fallback]) => [name, numberArg(name, fallback)])),
    print: (line) => {
      console.log(line);
      lines.push(line);
    },
  });
  if (args.includes('--doc')) {
    if (!result) {
      console.error('The run failed: docs/data-model-heat.md left as it was.');
      process.exit(1);
    }
    const baseline = stringArg('baseline');
    writeDocSection({
      lines,
      args: args.filter(
        (arg, index) => !['--baseline', '--baseline-label'].includes(args[index - 1] ?? '') && !arg.startsWith('--baseline'),
      ),
      baseline:
        baseline === undefined ? undefined : { label: stringArg('baseline-label') ?? baseline, text: readFileSync(baseline, 'utf8') },
    });
  }
  process.exit(0);
}
