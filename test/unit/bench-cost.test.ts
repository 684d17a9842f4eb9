import { describe, expect, it } from 'vitest';
import {
  ASSUMED,
  billedMs,
  costLines,
  type Deployment,
  fixedMonthlyLines,
  GB,
  PRICES,
  type ScenarioMeasure,
  STORAGE_OVERHEAD_BYTES,
  sqsRequestsFor,
  storedItem,
} from '#harness/bench/cost';

/** The heat bench's cost model: given counts, each line's dollars are what its price says. */

const deployment: Deployment = {
  apiTraceRate: 0.05,
  wafRules: 2,
  logRetentionDays: 90,
  consumedQueues: 3,
  workerFunctions: 4,
  traceWorkers: true,
  systemLogLevel: 'INFO',
  secrets: 1,
};

/** Two orders: two creates, one change-feed batch, two commission batches. */
const measure = (load: ScenarioMeasure['load']): ScenarioMeasure => ({
  load,
  orders: 2,
  apiRequests: 2,
  functions: [
    { fn: 'orders-create', memoryMb: 256, trigger: 'api', invocations: 2, billedMs: 100, logBytes: 400 },
    { fn: 'change-feed', memoryMb: 512, trigger: 'stream', invocations: 1, billedMs: 200, logBytes: 0 },
    { fn: 'commissions-process', memoryMb: 256, trigger: 'queue', invocations: 2, billedMs: 40, logBytes: 600 },
  ],
  sqsRequests: 3,
  writeUnits: 40,
  readUnits: 10,
  emails: 1,
  stored: { tableByteMonths: 2 * GB * 1e-6, indexByteMonths: GB * 1e-6 },
});

const dollarsOf = (lines: ReturnType<typeof costLines>, start: string) => lines.find((line) => line.item.startsWith(start))?.dollars;

describe('the heat bench cost model', () => {
  it('prices every line from its per-order count and its list price', () => {
    // Prepare
    const counts = measure('steady');

    // Act
    const lines = costLines(counts, deployment);

    // Assess
    expect(dollarsOf(lines, 'API Gateway')).toBeCloseTo(PRICES.apiGatewayRestPerMillion);
    expect(dollarsOf(lines, 'WAF requests')).toBeCloseTo(PRICES.wafRequestsPerMillion);
    // 5 invocations over 2 orders.
    expect(dollarsOf(lines, 'Lambda requests')).toBeCloseTo(2.5 * PRICES.lambdaRequestsPerMillion);
    // 100 ms over 2 orders at 256 MB: 0.0125 GB-s an order.
    expect(dollarsOf(lines, 'Lambda duration: orders-create')).toBeCloseTo(1e6 * 0.0125 * PRICES.lambdaArmPerGbSecond);
    // 200 ms over 2 orders at 512 MB: 0.05 GB-s an order.
    expect(dollarsOf(lines, 'Lambda duration: change-feed')).toBeCloseTo(1e6 * 0.05 * PRICES.lambdaArmPerGbSecond);
    expect(dollarsOf(lines, 'SQS requests made')).toBeCloseTo(1.5 * PRICES.sqsRequestsPerMillion);
    // 2 commission batches over 2 orders, a receive and a delete each.
    expect(dollarsOf(lines, 'SQS receives')).toBeCloseTo(2 * PRICES.sqsRequestsPerMillion);
    expect(dollarsOf(lines, 'DynamoDB write')).toBeCloseTo(20 * PRICES.dynamodbWriteUnitsPerMillion);
    expect(dollarsOf(lines, 'DynamoDB read')).toBeCloseTo(5 * PRICES.dynamodbReadUnitsPerMillion);
    expect(dollarsOf(lines, 'DynamoDB Streams')).toBe(0);
    expect(dollarsOf(lines, 'CloudWatch Logs: what the functions')).toBeCloseTo((1e6 * 500 * PRICES.logsIngestionPerGb) / GB);
    expect(dollarsOf(lines, "CloudWatch Logs: Lambda's")).toBeCloseTo(
      (1e6 * 2.5 * ASSUMED.platformLogBytesPerInvocation * PRICES.logsIngestionPerGb) / GB,
    );
    expect(dollarsOf(lines, 'CloudWatch Logs: API access')).toBeCloseTo(
      (1e6 * ASSUMED.accessLogBytesPerRequest * PRICES.logsIngestionPerGb) / GB,
    );
    // Steady: 5 % of the API requests and 5 % of the 3 triggered invocations, over 2 orders.
    expect(dollarsOf(lines, 'X-Ray')).toBeCloseTo((0.05 + 0.05 * 1.5) * PRICES.xrayTracesPerMillion);
    expect(dollarsOf(lines, 'SES')).toBeCloseTo(0.5 * 1000 * PRICES.sesPerThousand);
    // A millionth of a GB-month an order in the table and half that in the indexes: a million orders keep 1.5 GB.
    expect(dollarsOf(lines, 'DynamoDB storage')).toBeCloseTo(1.5 * PRICES.dynamodbStoragePerGbMonth);
    expect(dollarsOf(lines, 'DynamoDB point-in-time')).toBeCloseTo(PRICES.dynamodbPitrPerGbMonth);
  });

  it('traces every triggered invocation at quiet load, where each is the first of its second', () => {
    // Prepare
    const counts = measure('quiet');

    // Act
    const lines = costLines(counts, deployment);

    // Assess
    expect(dollarsOf(lines, 'X-Ray')).toBeCloseTo((0.05 + 1.5) * PRICES.xrayTracesPerMillion);
  });

  it('counts only the sampled requests when the triggered functions start no traces of their own, and no reservoir', () => {
    // Prepare
    const passThrough = { ...deployment, traceWorkers: false };

    // Act
    const quiet = costLines(measure('quiet'), passThrough);
    const monthly = fixedMonthlyLines(passThrough);

    // Assess
    expect(dollarsOf(quiet, 'X-Ray')).toBeCloseTo(0.05 * PRICES.xrayTracesPerMillion);
    expect(dollarsOf(monthly, 'X-Ray')).toBe(0);
    expect(dollarsOf(fixedMonthlyLines(deployment), 'X-Ray')).toBeGreaterThan(0);
  });

  it("counts no START/END/REPORT lines where the functions' system log level is WARN, in the archive neither", () => {
    // Prepare
    const warnOnly = { ...deployment, systemLogLevel: 'WARN' };

    // Act
    const lines = costLines(measure('steady'), warnOnly);
    const before = costLines(measure('steady'), deployment);

    // Assess
    expect(dollarsOf(lines, "CloudWatch Logs: Lambda's")).toBe(0);
    expect(dollarsOf(lines, 'CloudWatch Logs archive')).toBeLessThan(dollarsOf(before, 'CloudWatch Logs archive') ?? 0);
  });

  it('prices the write units line by line by what they serve, adding up to the same', () => {
    // Prepare
    const counts = { ...measure('steady'), writeUnitsByFeature: { 'event log': 4, orders: 36 } };

    // Act
    const lines = costLines(counts, deployment).filter((line) => line.item.startsWith('DynamoDB write'));

    // Assess
    expect(lines.map((line) => [line.item, line.quantity])).toEqual([
      ['DynamoDB write request units: event log', 2],
      ['DynamoDB write request units: orders', 18],
    ]);
    expect(lines.reduce((sum, line) => sum + line.dollars, 0)).toBeCloseTo(20 * PRICES.dynamodbWriteUnitsPerMillion);
  });

  it('keeps the monthly fees apart from the cost per order', () => {
    // Prepare, Act
    const lines = fixedMonthlyLines(deployment);

    // Assess
    expect(dollarsOf(lines, 'WAF')).toBe(PRICES.wafWebAclPerMonth + 2 * PRICES.wafRulePerMonth);
    expect(dollarsOf(lines, 'Secrets Manager')).toBe(PRICES.secretPerMonth);
  });

  it('bills each invocation rounded up to the millisecond after dividing out the contention', () => {
    // Prepare
    const durations = [0.2, 10.1, 40];

    // Act
    const plain = billedMs(durations);
    const divided = billedMs(durations, 4);

    // Assess
    expect(plain).toBe(1 + 11 + 40);
    expect(divided).toBe(1 + 3 + 10);
  });

  it('bills an SQS send per started 64 KB', () => {
    // Prepare, Act, Assess
    expect(sqsRequestsFor(10)).toBe(1);
    expect(sqsRequestsFor(64 * 1024)).toBe(1);
    expect(sqsRequestsFor(64 * 1024 + 1)).toBe(2);
  });

  it('stores an item in the table and in each index it is on, an expiring one for the time it has left', () => {
    // Prepare
    const now = 1_000_000;
    const order = { pk: { S: 'M#m1' }, sk: { S: 'ORDER#1' }, gsi1pk: { S: 'L' }, gsi1sk: { S: '01' }, total: { N: '12345' } };
    const orderBytes = 2 + 4 + 2 + 7 + 6 + 1 + 6 + 2 + 5 + 4;
    const claim = { pk: { S: 'M#m1' }, sk: { S: 'K' }, expires_at: { N: String(now + 15 * 86_400) } };

    // Act
    const stored = storedItem(order, now);
    const expiring = storedItem(claim, now);

    // Assess
    expect(stored.tableByteMonths).toBe(orderBytes + STORAGE_OVERHEAD_BYTES);
    expect(stored.indexByteMonths).toBe(orderBytes + STORAGE_OVERHEAD_BYTES);
    expect(expiring.indexByteMonths).toBe(0);
    // 2296000 seconds: its digits 2296 (trailing zeros trimmed) take 3 bytes.
    expect(expiring.tableByteMonths).toBeCloseTo((2 + 4 + 2 + 1 + 10 + 3 + STORAGE_OVERHEAD_BYTES) / 2);
  });
});
