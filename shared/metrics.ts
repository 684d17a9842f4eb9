import { AsyncLocalStorage } from 'node:async_hooks';
import { Metrics, MetricUnit, type MetricUnit as MetricUnitName } from '@aws-lambda-powertools/metrics';
import { groupBy } from './group-by';
import { METRIC, METRICS_NAMESPACE, METRICS_SERVICE, type MetricName } from './metric-names';

export { METRIC, METRICS_NAMESPACE, METRICS_SERVICE, type MetricName } from './metric-names';

// The business metrics as EMF lines on stdout, published at once or with a batch; off outside Lambda unless enabled.
if (process.env.POWERTOOLS_METRICS_DISABLED === undefined && !process.env.AWS_LAMBDA_FUNCTION_NAME) {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
}

export const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: METRICS_SERVICE,
  defaultDimensions: { stage: process.env.STAGE ?? 'unknown' },
});

/** Every metric is a count but these. */
const UNITS: Partial<Record<MetricName, (typeof MetricUnitName)[keyof typeof MetricUnitName]>> = {
  [METRIC.commissionAmount]: MetricUnit.NoUnit,
  [METRIC.webhookLatency]: MetricUnit.Milliseconds,
};

type Point = [name: MetricName, value: number];
type Held = { points: Point[]; dimensions: Record<string, string> };

/** The points a batch holds until its end, with their dimensions (per invocation, also when the local stack runs several at once). */
const heldPoints = new AsyncLocalStorage<Held[]>();

/** One EMF line: the points (a metric added twice becomes one array of values) and the dimensions beside the default ones. */
const publish = (points: readonly Point[], dimensions: Record<string, string>): void => {
  if (Object.keys(dimensions).length > 0) metrics.addDimensions(dimensions);
  for (const [name, value] of points) metrics.addMetric(name, UNITS[name] ?? MetricUnit.Count, value);
  metrics.publishStoredMetrics();
};

/** Publishes data points in one EMF line, now or at the end of the batch it is part of; `dimensions` are added to the default ones. */
export const emitMetrics = (points: Partial<Record<MetricName, number>>, dimensions: Record<string, string> = {}): void => {
  const entries = Object.entries(points).filter((entry): entry is Point => typeof entry[1] === 'number' && Number.isFinite(entry[1]));
  if (entries.length === 0) return;
  const held = heldPoints.getStore();
  if (held) held.push({ points: entries, dimensions });
  else publish(entries, dimensions);
};

/** Adds `value` (default 1) to a counter, published now (or with its batch). */
export const countMetric = (name: MetricName, value = 1): void => emitMetrics({ [name]: value });

/** The most values of one batch's points one line takes. */
const LINE_VALUES = 99;

/** Publishes the points held so far, one EMF line per set of dimensions, and lets them go. */
const publishHeld = (held: Held[]): void => {
  const sets = groupBy(held.splice(0), ({ dimensions }) => JSON.stringify(Object.entries(dimensions).sort()));
  for (const group of sets.values()) {
    const points = group.flatMap((entry) => entry.points);
    // Powertools publishes a metric on its own once it holds 100 values, dropping the dimensions of the rest.
    for (let start = 0; start < points.length; start += LINE_VALUES)
      publish(points.slice(start, start + LINE_VALUES), group[0]?.dimensions ?? {});
  }
};

/** Runs a batch holding its points, then publishes them; also at `publishBy` (epoch ms, before a timeout, which runs no `finally`). */
export const withBatchedMetrics = async <T>(work: () => Promise<T>, publishBy = Number.POSITIVE_INFINITY): Promise<T> => {
  const held: Held[] = [];
  const timer = Number.isFinite(publishBy) ? setTimeout(() => publishHeld(held), Math.max(0, publishBy - Date.now())) : undefined;
  try {
    return await heldPoints.run(held, work);
  } finally {
    clearTimeout(timer);
    publishHeld(held);
  }
};
