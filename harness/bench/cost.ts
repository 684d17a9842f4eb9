/**
 * The cost model of the heat bench (harness/bench/heat.ts): list prices, what is assumed where
 * nothing can be measured locally, and pure functions that turn a scenario's measured counts into
 * dollars per million orders. Nothing here measures; test/unit/bench-cost.test.ts checks the sums.
 * docs/data-model-heat.md explains the model: change both together.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GLOBAL_INDEXES, TABLE_KEYS, TTL_ATTRIBUTE } from '#shared/db/table-def';

/**
 * AWS list prices, us-east-1, on demand, no free tier. API Gateway, Lambda, DynamoDB units and SQS
 * were checked against aws.amazon.com/{api-gateway,lambda,dynamodb,sqs}/pricing on 2026-11-23 (the
 * DynamoDB figures published since its on-demand price cut of 2024-11-01); the others were added on
 * `date` from the published list PRICES.
 */
export const PRICES = {
  date: '2026-11-27',
  region: 'us-east-1',
  /** API Gateway REST API, per million requests (first 333 million a month). */
  apiGatewayRestPerMillion: 3.5,
  /** AWS WAF, per million requests the web ACL inspects. */
  wafRequestsPerMillion: 0.6,
  /** AWS WAF, per web ACL and month. */
  wafWebAclPerMonth: 5,
  /** AWS WAF, per rule and month. */
  wafRulePerMonth: 1,
  /** Lambda requests, per million. */
  lambdaRequestsPerMillion: 0.2,
  /** Lambda duration, arm64, per GB-second (first 6 billion GB-s a month). */
  lambdaArmPerGbSecond: 0.0000133334,
  /** DynamoDB on-demand, per million write request units (standard table class). */
  dynamodbWriteUnitsPerMillion: 0.625,
  /** DynamoDB on-demand, per million read request units. */
  dynamodbReadUnitsPerMillion: 0.125,
  /** DynamoDB storage, per GB-month (standard table class; table and indexes). */
  dynamodbStoragePerGbMonth: 0.25,
  /** DynamoDB point-in-time recovery (lib/data.ts turns it on), per GB-month of table data. */
  dynamodbPitrPerGbMonth: 0.2,
  /** SQS standard queue, per million requests (each 64 KB chunk of a request's payload is one request). */
  sqsRequestsPerMillion: 0.4,
  /** CloudWatch Logs, standard class, per GB ingested. */
  logsIngestionPerGb: 0.5,
  /** CloudWatch Logs, per GB-month archived (billed on compressed bytes). */
  logsStoragePerGbMonth: 0.03,
  /** X-Ray, per million traces recorded. */
  xrayTracesPerMillion: 5,
  /** SES, per thousand e-mails sent. */
  sesPerThousand: 0.1,
  /** Secrets Manager, per secret and month (the stage's webhook key). */
  secretPerMonth: 0.4,
} as const;

/** Bytes in a GB as AWS bills storage and transfer (GiB). */
export const GB = 1024 ** 3;
const MILLION = 1_000_000;
const DAY_SECONDS = 86_400;
/** A billing month. */
const MONTH_SECONDS = 30 * DAY_SECONDS;

/**
 * One line of the access log lib/rest-api.ts configures, with every field filled as a create's
 * request fills it: the bytes each API request adds to the access log group.
 */
const ACCESS_LOG_SAMPLE = {
  requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
  extendedRequestId: 'Hk3v5FjLIAMEbXw=',
  requestTime: '27/Nov/2026:03:40:45 +0000',
  ip: '203.0.113.10',
  userAgent: 'merchant-platform/1.0 (+https://shop.example)',
  method: 'POST',
  resourcePath: '/api/v2/orders/create',
  path: '/live/api/v2/orders/create',
  protocol: 'HTTP/1.1',
  status: '201',
  responseLength: '1024',
  responseLatency: '48',
  integrationLatency: '45',
  integrationStatus: '201',
  errorType: '-',
  errorMessage: '-',
  wafResponseCode: 'WAF_ALLOW',
  xrayTraceId: '1-6747e5ad-3e1bd0c2f5a1b7c9d0e4f6a8',
};

/** What cannot be measured on the local stack, and the figure taken instead. */
export const ASSUMED = {
  /** Lambda's own START, END and REPORT lines of each invocation (REPORT names the trace when sampled). */
  platformLogBytesPerInvocation: 300,
  /** One access log line per API request (ACCESS_LOG_SAMPLE's size plus a newline). */
  accessLogBytesPerRequest: Buffer.byteLength(JSON.stringify(ACCESS_LOG_SAMPLE)) + 1,
  /** The SQS event source mapping: 1 ReceiveMessage and 1 DeleteMessageBatch per invocation of a queue-triggered function. */
  sqsRequestsPerQueueInvocation: 2,
  /**
   * What an SQS event source mapping asks an idle queue: 5 pollers, each a 20 s long poll that
   * comes back empty (3 a minute), all month.
   */
  idleReceivesPerQueuePerMonth: 5 * 3 * 60 * 24 * 30,
  /**
   * Lambda's sampling of the traces a queue- or stream-triggered function starts itself when the
   * stage traces its workers (it cannot be configured): the first invocation each second and 5 %
   * of the rest. At steady load that is 5 % of the invocations plus at most one a second (a fixed
   * monthly amount, shown apart); at quiet load every invocation is the first of its second and
   * is recorded. Otherwise (pass-through) they start none: their invocations join the traces of
   * sampled requests, which are billed once, as the request's.
   */
  workerTraceShare: { steady: 0.05, quiet: 1 },
  workerTraceReservoirPerSecond: 1,
} as const;

/** How a function is invoked: behind API Gateway, or by its event source mapping. */
export type Trigger = 'api' | 'queue' | 'stream';

/** What one function did in a scenario (totals over the scenario's orders). */
export type FunctionUse = {
  fn: string;
  /** Its configured memory (lib/function-specs.ts). */
  memoryMb: number;
  trigger: Trigger;
  invocations: number;
  /** Billed duration of all its invocations, ms (see billedMs). */
  billedMs: number;
  /** Bytes its invocations wrote to stdout and stderr. */
  logBytes: number;
};

/** What is stored after a scenario beyond what its merchants held before: bytes with their overhead, weighted by the share of a month each is kept (see storedItem). */
export type Stored = { tableByteMonths: number; indexByteMonths: number };

/** A scenario's measured counts (totals over its orders). */
export type ScenarioMeasure = {
  load: 'steady' | 'quiet';
  orders: number;
  /** Requests API Gateway (and WAF) received. */
  apiRequests: number;
  functions: FunctionUse[];
  /** SQS requests the functions made (each 64 KB of a send's payload one), measured. */
  sqsRequests: number;
  writeUnits: number;
  /** The same write units by what they serve (orders, the event log, the commission reports, webhooks), when known: priced line by line. */
  writeUnitsByFeature?: Record<string, number>;
  readUnits: number;
  emails: number;
  stored: Stored;
};

/** What lib/ deploys that the price depends on (heat.ts reads each from where lib/ sets it). */
export type Deployment = {
  /** The share of API requests traced. */
  apiTraceRate: number;
  wafRules: number;
  logRetentionDays: number;
  /** Queues an event source mapping consumes. */
  consumedQueues: number;
  /** Functions triggered by a queue or the stream. */
  workerFunctions: number;
  /** Whether they start traces of their own at Lambda's fixed rate. */
  traceWorkers: boolean;
  secrets: number;
};

/** A line of the cost table: a per-order quantity, its price, and dollars per million orders (or per month). */
export type CostLine = {
  item: string;
  price: string;
  /** Per order. */
  quantity: number;
  unit: string;
  /** Per million orders; for `perMonth` lines, per month that a million orders are kept. */
  dollars: number;
  perMonth?: boolean;
};

/** Lambda bills each invocation's duration rounded up to the millisecond; `contention` divides the measured times first. */
export const billedMs = (durations: readonly number[], contention = 1): number =>
  durations.reduce((sum, ms) => sum + Math.max(1, Math.ceil(ms / contention)), 0);

/** Requests SQS bills for a send of `bytes` (each started 64 KB one request). */
export const sqsRequestsFor = (bytes: number): number => Math.max(1, Math.ceil(bytes / (64 * 1024)));

const perMillion = (price: number) => `$${price} / million`;

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
    platformLogBytes: invocations * ASSUMED.platformLogBytesPerInvocation,
    accessLogBytes: requests * ASSUMED.accessLogBytesPerRequest,
  };
};

type PerOrder = ReturnType<typeof perOrder>;

/** A line priced per million of its unit. */
const perMillionLine = (item: string, pricePerMillion: number, quantity: number, unit: string): CostLine => ({
  item,
  price: perMillion(pricePerMillion),
  quantity,
  unit,
  dollars: quantity * pricePerMillion,
});

/** The front door and the functions: API Gateway, WAF, Lambda's requests and each function's duration. */
const computeLines = (measure: ScenarioMeasure, q: PerOrder): CostLine[] => [
  perMillionLine('API Gateway REST API', PRICES.apiGatewayRestPerMillion, q.requests, 'requests'),
  perMillionLine('WAF requests', PRICES.wafRequestsPerMillion, q.requests, 'requests'),
  perMillionLine('Lambda requests (every function)', PRICES.lambdaRequestsPerMillion, q.invocations, 'invocations'),
  ...measure.functions.map((use): CostLine => {
    const gbSeconds = q.per((use.billedMs / 1000) * (use.memoryMb / 1024));
    return {
      item: `Lambda duration: ${use.fn} (${use.memoryMb} MB)`,
      price: `$${PRICES.lambdaArmPerGbSecond} / GB-s`,
      quantity: gbSeconds,
      unit: 'GB-s',
      dollars: MILLION * gbSeconds * PRICES.lambdaArmPerGbSecond,
    };
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
  {
    item: 'DynamoDB Streams reads (by the change feed trigger)',
    price: 'free for Lambda triggers',
    quantity: q.streamInvocations,
    unit: 'batches',
    dollars: 0,
  },
];

/** What is written down and kept an eye on: CloudWatch Logs (ingested and archived), X-Ray traces. */
const observabilityLines = (measure: ScenarioMeasure, q: PerOrder, deployment: Deployment): CostLine[] => {
  const logBytes = q.functionLogBytes + q.platformLogBytes + q.accessLogBytes;
  const workerTraceShare = deployment.traceWorkers ? ASSUMED.workerTraceShare[measure.load] : 0;
  const traces = q.requests * deployment.apiTraceRate + q.workerInvocations * workerTraceShare;
  const logsLine = (item: string, bytes: number): CostLine => ({
    item,
    price: `$${PRICES.logsIngestionPerGb} / GB`,
    quantity: bytes,
    unit: 'bytes',
    dollars: (MILLION * bytes * PRICES.logsIngestionPerGb) / GB,
  });
  return [
    logsLine('CloudWatch Logs: what the functions wrote (measured)', q.functionLogBytes),
    logsLine(
      `CloudWatch Logs: Lambda's START/END/REPORT lines (${ASSUMED.platformLogBytesPerInvocation} bytes an invocation, assumed)`,
      q.platformLogBytes,
    ),
    logsLine(`CloudWatch Logs: API access log (${ASSUMED.accessLogBytesPerRequest} bytes a request, estimated)`, q.accessLogBytes),
    {
      item: `CloudWatch Logs archive (${deployment.logRetentionDays} days kept; upper bound: billed compressed)`,
      price: `$${PRICES.logsStoragePerGbMonth} / GB-month`,
      quantity: logBytes,
      unit: 'bytes',
      dollars: (MILLION * logBytes * PRICES.logsStoragePerGbMonth * deployment.logRetentionDays * DAY_SECONDS) / MONTH_SECONDS / GB,
    },
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
  return [
    {
      item: 'DynamoDB storage, table and indexes',
      price: `$${PRICES.dynamodbStoragePerGbMonth} / GB-month`,
      quantity: (tableGbMonths + indexGbMonths) * GB,
      unit: 'byte-months',
      dollars: MILLION * (tableGbMonths + indexGbMonths) * PRICES.dynamodbStoragePerGbMonth,
      perMonth: true,
    },
    {
      item: 'DynamoDB point-in-time recovery (table data)',
      price: `$${PRICES.dynamodbPitrPerGbMonth} / GB-month`,
      quantity: tableGbMonths * GB,
      unit: 'byte-months',
      dollars: MILLION * tableGbMonths * PRICES.dynamodbPitrPerGbMonth,
      perMonth: true,
    },
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
    {
      item: 'SES e-mails',
      price: `$${PRICES.sesPerThousand} / thousand`,
      quantity: emails,
      unit: 'e-mails',
      dollars: emails * PRICES.sesPerThousand * 1000,
    },
    ...storageLines(measure, q),
  ];
};

/** What a stage costs each month whatever its orders: fixed fees, and what its mappings and sampling add at most. */
export const fixedMonthlyLines = (deployment: Deployment): CostLine[] => {
  const idleReceives = deployment.consumedQueues * ASSUMED.idleReceivesPerQueuePerMonth;
  const reservoirTraces = deployment.traceWorkers ? deployment.workerFunctions * ASSUMED.workerTraceReservoirPerSecond * MONTH_SECONDS : 0;
  return [
    {
      item: `WAF web ACL and its ${deployment.wafRules} rules`,
      price: `$${PRICES.wafWebAclPerMonth} + $${PRICES.wafRulePerMonth} a rule / month`,
      quantity: 1 + deployment.wafRules,
      unit: 'ACL + rules',
      dollars: PRICES.wafWebAclPerMonth + deployment.wafRules * PRICES.wafRulePerMonth,
    },
    {
      item: `SQS empty long polls of the event source mappings (${deployment.consumedQueues} queues, assumed 5 pollers x 3 a minute each)`,
      price: perMillion(PRICES.sqsRequestsPerMillion),
      quantity: idleReceives,
      unit: 'requests',
      dollars: (idleReceives * PRICES.sqsRequestsPerMillion) / MILLION,
    },
    {
      item: deployment.traceWorkers
        ? `X-Ray reservoir of the ${deployment.workerFunctions} triggered functions at steady load (at most 1 trace a second each)`
        : `X-Ray reservoir of the ${deployment.workerFunctions} triggered functions: none (they start no traces; -c traceWorkers=true adds at most 1 a second each)`,
      price: perMillion(PRICES.xrayTracesPerMillion),
      quantity: reservoirTraces,
      unit: 'traces',
      dollars: (reservoirTraces * PRICES.xrayTracesPerMillion) / MILLION,
    },
    {
      item: 'Secrets Manager: the webhook key',
      price: `$${PRICES.secretPerMonth} / secret-month`,
      quantity: deployment.secrets,
      unit: 'secrets',
      dollars: deployment.secrets * PRICES.secretPerMonth,
    },
  ];
};

// ---------------------------------------------------------------------------------------------
// Storage: DynamoDB's item size rule, and what an item takes in the table and in each index.

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

/**
 * What one item (as Scan returns it) takes: in the table its size + 100 bytes, and in each index it
 * is on (both its keys set) the same again for an ALL projection or its table and index keys + 100
 * bytes for a KEYS_ONLY one; weighted by the share of a month it is kept: an item with a TTL
 * (`expires_at`, epoch seconds) counts for the time it has left, at most a month.
 */
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
