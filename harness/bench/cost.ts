/** The heat bench's cost model, from measured counts to dollars (docs/data-model-heat.md#the-cost-per-million-orders-what-is-measured-what-is-assumed). */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { ACCESS_LOG_FIELDS } from '#lib/rest-api';
import { GLOBAL_INDEXES, TABLE_KEYS, TTL_ATTRIBUTE } from '#shared/db/table-def';

/** AWS list prices, as the doc's Prices table says them. */
export const PRICES = {
  date: '2026-11-27',
  region: 'us-east-1',
  apiGatewayRestPerMillion: 3.5,
  wafRequestsPerMillion: 0.6,
  wafWebAclPerMonth: 5,
  wafRulePerMonth: 1,
  lambdaRequestsPerMillion: 0.2,
  lambdaArmPerGbSecond: 0.0000133334,
  dynamodbWriteUnitsPerMillion: 0.625,
  dynamodbReadUnitsPerMillion: 0.125,
  dynamodbStoragePerGbMonth: 0.25,
  dynamodbPitrPerGbMonth: 0.2,
  sqsRequestsPerMillion: 0.4,
  logsIngestionPerGb: 0.5,
  logsStoragePerGbMonth: 0.03,
  xrayTracesPerMillion: 5,
  sesPerThousand: 0.1,
  secretPerMonth: 0.4,
} as const;

/** Bytes in a GB as AWS bills storage and transfer (GiB). */
export const GB = 1024 ** 3;
const MILLION = 1_000_000;
const DAY_SECONDS = 86_400;
const MONTH_SECONDS = 30 * DAY_SECONDS;

/** A line of the access log lib/rest-api.ts configures, filled as a create's request fills it. */
const ACCESS_LOG_SAMPLE: Record<keyof typeof ACCESS_LOG_FIELDS, string> = {
  requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
  requestTime: '27/Nov/2026:03:40:45 +0000',
  ip: '203.0.113.10',
  userAgent: 'merchant-platform/1.0 (+https://shop.example)',
  method: 'POST',
  path: '/live/api/v2/orders/create',
  status: '201',
  responseLength: '1024',
  responseLatency: '48',
  integrationLatency: '45',
  errorMessage: '-',
  wafResponseCode: 'WAF_ALLOW',
};

/** What cannot be measured on the local stack, and the figure taken instead (the doc's Assumed). */
export const ASSUMED = {
  platformLogBytesPerInvocation: 300,
  accessLogBytesPerRequest: Buffer.byteLength(JSON.stringify(ACCESS_LOG_SAMPLE)) + 1,
  sqsRequestsPerQueueInvocation: 2,
  idleReceivesPerQueuePerMonth: 5 * 3 * 60 * 24 * 30,
  workerTraceShare: { steady: 0.05, quiet: 1 },
  workerTraceReservoirPerSecond: 1,
} as const;

/** How a function is invoked: behind API Gateway, or by its event source mapping. */
export type Trigger = 'api' | 'queue' | 'stream';

/** What one function did in a scenario: totals over its orders. */
export type FunctionUse = {
  fn: string;
  memoryMb: number;
  trigger: Trigger;
  invocations: number;
  billedMs: number;
  logBytes: number;
};

/** Stored beyond what a scenario's merchants held before: bytes with their overhead, weighted by the share of a month kept (storedItem). */
export type Stored = { tableByteMonths: number; indexByteMonths: number };

/** A scenario's measured counts (totals over its orders); the write units by what they serve, when known, are priced line by line. */
export type ScenarioMeasure = {
  load: 'steady' | 'quiet';
  orders: number;
  apiRequests: number;
  functions: FunctionUse[];
  sqsRequests: number;
  writeUnits: number;
  writeUnitsByFeature?: Record<string, number>;
  readUnits: number;
  emails: number;
  stored: Stored;
};

/** What lib/ deploys that the price depends on (heat.ts reads each from where lib/ sets it). */
export type Deployment = {
  apiTraceRate: number;
  wafRules: number;
  logRetentionDays: number;
  consumedQueues: number;
  workerFunctions: number;
  traceWorkers: boolean;
  systemLogLevel: string;
  secrets: number;
};

/** Lambda bills each invocation's duration rounded up to the millisecond; `contention` divides the measured times first. */
export const billedMs = (durations: readonly number[], contention = 1): number =>
  durations.reduce((sum, ms) => sum + Math.max(1, Math.ceil(ms / contention)), 0);

/** Requests SQS bills for a send of `bytes` (each started 64 KB one request). */
export const sqsRequestsFor = (bytes: number): number => Math.max(1, Math.ceil(bytes / (64 * 1024)));

const perMillion = (price: number) => `$${price} / million`;

/** A line of the cost table: a per-order quantity, its price, dollars per million orders (`perMonth`: a month of a million kept). */
const line = (item: string, price: string, quantity: number, unit: string, dollars: number, perMonth = false) => ({
  item,
  price,
  quantity,
  unit,
  dollars,
  perMonth,
});

export type CostLine = ReturnType<typeof line>;

/** A measure's per-order quantities, shared by the groups of lines below. */
const perOrder = (measure: ScenarioMeasure) => {
  const per = (total: number) => total / Math.max(1, measure.orders);
  const sum = (uses: readonly FunctionUse[], of: (use: FunctionUse) => number) => per(uses.reduce((total, use) => total + of(use), 0));
  const invocationsOf = (keep: (use: FunctionUse) => boolean) => sum(measure.functions.filter(keep), (use) => use.invocations);
  const requests = per(measure.apiRequests);
  const invocations = invocationsOf(() => true);
  return {
    per,
    requests,
    invocations,
    workerInvocations: invocationsOf((use) => use.trigger !== 'api'),
    queueInvocations: invocationsOf((use) => use.trigger === 'queue'),
    streamInvocations: invocationsOf((use) => use.trigger === 'stream'),
    functionLogBytes: sum(measure.functions, (use) => use.logBytes),
    accessLogBytes: requests * ASSUMED.accessLogBytesPerRequest,
  };
};

type PerOrder = ReturnType<typeof perOrder>;

/** A line priced per million of its unit. */
const perMillionLine = (item: string, pricePerMillion: number, quantity: number, unit: string): CostLine =>
  line(item, perMillion(pricePerMillion), quantity, unit, quantity * pricePerMillion);

/** The front door and the functions: API Gateway, WAF, Lambda's requests and each function's duration. */
const computeLines = (measure: ScenarioMeasure, q: PerOrder): CostLine[] => [
  perMillionLine('API Gateway REST API', PRICES.apiGatewayRestPerMillion, q.requests, 'requests'),
  perMillionLine('WAF requests', PRICES.wafRequestsPerMillion, q.requests, 'requests'),
  perMillionLine('Lambda requests (every function)', PRICES.lambdaRequestsPerMillion, q.invocations, 'invocations'),
  ...measure.functions.map((use) => {
    const gbSeconds = q.per((use.billedMs / 1000) * (use.memoryMb / 1024));
    const item = `Lambda duration: ${use.fn} (${use.memoryMb} MB)`;
    return line(item, `$${PRICES.lambdaArmPerGbSecond} / GB-s`, gbSeconds, 'GB-s', MILLION * gbSeconds * PRICES.lambdaArmPerGbSecond);
  }),
];

/** The cost line of a feature's DynamoDB write units (all of them: ''). */
export const writeUnitsItem = (feature: string) => `DynamoDB write request units${feature === '' ? '' : `: ${feature}`}`;

/** The queues and the table: SQS requests, DynamoDB's write units (by feature when measured so) and read units, stream reads. */
const dataLines = (measure: ScenarioMeasure, q: PerOrder): CostLine[] => [
  perMillionLine('SQS requests made by the functions (measured)', PRICES.sqsRequestsPerMillion, q.per(measure.sqsRequests), 'requests'),
  perMillionLine(
    `SQS receives and deletes of the event source mappings (${ASSUMED.sqsRequestsPerQueueInvocation} per queue-triggered invocation, assumed)`,
    PRICES.sqsRequestsPerMillion,
    q.queueInvocations * ASSUMED.sqsRequestsPerQueueInvocation,
    'requests',
  ),
  ...Object.entries(measure.writeUnitsByFeature ?? { '': measure.writeUnits }).map(([feature, units]) =>
    perMillionLine(writeUnitsItem(feature), PRICES.dynamodbWriteUnitsPerMillion, q.per(units), 'WRU'),
  ),
  perMillionLine('DynamoDB read request units', PRICES.dynamodbReadUnitsPerMillion, q.per(measure.readUnits), 'RRU'),
  line('DynamoDB Streams reads (by the change feed trigger)', 'free for Lambda triggers', q.streamInvocations, 'batches', 0),
];

/** What is written down and kept an eye on: CloudWatch Logs (ingested and archived), X-Ray traces. */
const observabilityLines = (measure: ScenarioMeasure, q: PerOrder, deployment: Deployment): CostLine[] => {
  const platformLogBytes = deployment.systemLogLevel === 'WARN' ? 0 : q.invocations * ASSUMED.platformLogBytesPerInvocation;
  const logBytes = q.functionLogBytes + platformLogBytes + q.accessLogBytes;
  const workerTraceShare = deployment.traceWorkers ? ASSUMED.workerTraceShare[measure.load] : 0;
  const traces = q.requests * deployment.apiTraceRate + q.workerInvocations * workerTraceShare;
  const logsLine = (item: string, bytes: number) =>
    line(item, `$${PRICES.logsIngestionPerGb} / GB`, bytes, 'bytes', (MILLION * bytes * PRICES.logsIngestionPerGb) / GB);
  return [
    logsLine('CloudWatch Logs: what the functions wrote (measured)', q.functionLogBytes),
    logsLine(
      deployment.systemLogLevel === 'WARN'
        ? "CloudWatch Logs: Lambda's START/END/REPORT lines: none (system log level WARN: only a failed invocation's)"
        : `CloudWatch Logs: Lambda's START/END/REPORT lines (${ASSUMED.platformLogBytesPerInvocation} bytes an invocation, assumed)`,
      platformLogBytes,
    ),
    logsLine(`CloudWatch Logs: API access log (${ASSUMED.accessLogBytesPerRequest} bytes a request, estimated)`, q.accessLogBytes),
    line(
      `CloudWatch Logs archive (${deployment.logRetentionDays} days kept; upper bound: billed compressed)`,
      `$${PRICES.logsStoragePerGbMonth} / GB-month`,
      logBytes,
      'bytes',
      (MILLION * logBytes * PRICES.logsStoragePerGbMonth * deployment.logRetentionDays * DAY_SECONDS) / MONTH_SECONDS / GB,
    ),
    perMillionLine(
      `X-Ray traces (API requests ${Math.round(deployment.apiTraceRate * 100)} %; ${
        deployment.traceWorkers
          ? `triggered invocations ${Math.round(ASSUMED.workerTraceShare.steady * 100)} % at steady load, ${Math.round(ASSUMED.workerTraceShare.quiet * 100)} % at quiet load`
          : 'triggered functions start none: they join sampled requests'
      })`,
      PRICES.xrayTracesPerMillion,
      traces,
      'traces',
    ),
  ];
};

/** What a month of keeping a million orders costs: the table and its indexes, and their point-in-time recovery. */
const storageLines = (measure: ScenarioMeasure, q: PerOrder): CostLine[] => {
  const tableGbMonths = q.per(measure.stored.tableByteMonths) / GB;
  const indexGbMonths = q.per(measure.stored.indexByteMonths) / GB;
  const stored = (item: string, gbMonths: number, pricePerGbMonth: number) =>
    line(item, `$${pricePerGbMonth} / GB-month`, gbMonths * GB, 'byte-months', MILLION * gbMonths * pricePerGbMonth, true);
  return [
    stored('DynamoDB storage, table and indexes', tableGbMonths + indexGbMonths, PRICES.dynamodbStoragePerGbMonth),
    stored('DynamoDB point-in-time recovery (table data)', tableGbMonths, PRICES.dynamodbPitrPerGbMonth),
  ];
};

/** The cost of a million orders in one scenario, line by line (per-order quantities from `measure`). */
export const costLines = (measure: ScenarioMeasure, deployment: Deployment): CostLine[] => {
  const q = perOrder(measure);
  const emails = q.per(measure.emails);
  return [
    ...computeLines(measure, q),
    ...dataLines(measure, q),
    ...observabilityLines(measure, q, deployment),
    line('SES e-mails', `$${PRICES.sesPerThousand} / thousand`, emails, 'e-mails', emails * PRICES.sesPerThousand * 1000),
    ...storageLines(measure, q),
  ];
};

/** What a stage costs each month whatever its orders: fixed fees, and what its mappings and sampling add at most. */
export const fixedMonthlyLines = (deployment: Deployment): CostLine[] => {
  const idleReceives = deployment.consumedQueues * ASSUMED.idleReceivesPerQueuePerMonth;
  const reservoirTraces = deployment.traceWorkers ? deployment.workerFunctions * ASSUMED.workerTraceReservoirPerSecond * MONTH_SECONDS : 0;
  // A month's count of a per-million price, priced per month.
  const monthly = (item: string, pricePerMillion: number, quantity: number, unit: string) =>
    line(item, perMillion(pricePerMillion), quantity, unit, (quantity * pricePerMillion) / MILLION);
  return [
    line(
      `WAF web ACL and its ${deployment.wafRules} rules`,
      `$${PRICES.wafWebAclPerMonth} + $${PRICES.wafRulePerMonth} a rule / month`,
      1 + deployment.wafRules,
      'ACL + rules',
      PRICES.wafWebAclPerMonth + deployment.wafRules * PRICES.wafRulePerMonth,
    ),
    monthly(
      `SQS empty long polls of the event source mappings (${deployment.consumedQueues} queues, assumed 5 pollers x 3 a minute each)`,
      PRICES.sqsRequestsPerMillion,
      idleReceives,
      'requests',
    ),
    monthly(
      deployment.traceWorkers
        ? `X-Ray reservoir of the ${deployment.workerFunctions} triggered functions at steady load (at most 1 trace a second each)`
        : `X-Ray reservoir of the ${deployment.workerFunctions} triggered functions: none (they start no traces; -c traceWorkers=true adds at most 1 a second each)`,
      PRICES.xrayTracesPerMillion,
      reservoirTraces,
      'traces',
    ),
    line(
      'Secrets Manager: the webhook key',
      `$${PRICES.secretPerMonth} / secret-month`,
      deployment.secrets,
      'secrets',
      deployment.secrets * PRICES.secretPerMonth,
    ),
  ];
};

/** DynamoDB's size of a number: about one byte per two significant digits, plus one. */
const numberBytes = (text: string) => {
  const digits = text.replace(/^[-+]/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
};

/** DynamoDB's size of a value: strings as UTF-8, lists and maps 3 bytes plus 1 per element, sets their elements. */
const valueBytes = (value: AttributeValue): number => {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.SS !== undefined) return value.SS.reduce((sum, item) => sum + Buffer.byteLength(item), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, item) => sum + numberBytes(item), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, item) => sum + item.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, item) => sum + 1 + valueBytes(item), 0);
  if (value.M !== undefined)
    return 3 + Object.entries(value.M).reduce((sum, [name, item]) => sum + 1 + Buffer.byteLength(name) + valueBytes(item), 0);
  return 1;
};

type Item = Record<string, AttributeValue>;

/** An item's (or some of its attributes') size: names and values. */
const itemBytes = (item: Item, names: readonly string[] = Object.keys(item)): number =>
  names.reduce((sum, name) => {
    const value = item[name];
    return value === undefined ? sum : sum + Buffer.byteLength(name) + valueBytes(value);
  }, 0);

/** DynamoDB's storage overhead of every item and of every index entry. */
export const STORAGE_OVERHEAD_BYTES = 100;

/** What one item (as Scan returns it) takes in the table and its indexes, by the share of a month it is kept (docs/data-model-heat.md, "Storage"). */
export const storedItem = (item: Item, nowSeconds: number): Stored => {
  const expires = Number(item[TTL_ATTRIBUTE]?.N);
  const share = Number.isFinite(expires) ? Math.min(1, Math.max(0, (expires - nowSeconds) / MONTH_SECONDS)) : 1;
  const size = itemBytes(item);
  const index = GLOBAL_INDEXES.filter((gsi) => item[gsi.partitionKey] !== undefined && item[gsi.sortKey] !== undefined).reduce(
    (sum, gsi) =>
      sum +
      STORAGE_OVERHEAD_BYTES +
      (gsi.projection === 'ALL' ? size : itemBytes(item, [TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey, gsi.partitionKey, gsi.sortKey])),
    0,
  );
  return { tableByteMonths: (size + STORAGE_OVERHEAD_BYTES) * share, indexByteMonths: index * share };
};
