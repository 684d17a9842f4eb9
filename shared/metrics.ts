/**
 * The business metrics, configured once: Powertools Metrics writes them as CloudWatch Embedded
 * Metric Format lines on the function's stdout, which CloudWatch turns into data points (no API
 * call, no extra permission). Namespace `AffiliateMerchantApi`, dimensions `service` and `stage`
 * on every point. The names live in shared/metric-names.ts, which the dashboard and alarms
 * (lib/observability.ts) read too.
 *
 * Each helper publishes at once (one EMF line per call): route handlers need no flush middleware,
 * and what was counted is out even if the invocation fails afterwards.
 *
 * Outside Lambda (`npm start`, tests, `npm run invoke`) nothing reads stdout as metrics, so they are
 * off there unless POWERTOOLS_METRICS_DISABLED=false turns them on.
 */
import { Metrics, MetricUnit, type MetricUnit as MetricUnitName } from '@aws-lambda-powertools/metrics';
import { METRIC, METRICS_NAMESPACE, METRICS_SERVICE, type MetricName } from './metric-names';

export { METRIC, METRICS_NAMESPACE, METRICS_SERVICE, type MetricName } from './metric-names';

if (process.env.POWERTOOLS_METRICS_DISABLED === undefined && !process.env.AWS_LAMBDA_FUNCTION_NAME) {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
}

export const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: METRICS_SERVICE,
  defaultDimensions: { stage: process.env.STAGE ?? 'unknown' },
});

const UNITS: Record<MetricName, (typeof MetricUnitName)[keyof typeof MetricUnitName]> = {
  [METRIC.ordersAccepted]: MetricUnit.Count,
  [METRIC.ordersCancelled]: MetricUnit.Count,
  [METRIC.commissionsRecorded]: MetricUnit.Count,
  [METRIC.commissionAmount]: MetricUnit.NoUnit,
  [METRIC.emailsSent]: MetricUnit.Count,
  [METRIC.emailsFailed]: MetricUnit.Count,
  [METRIC.quotaRefusals]: MetricUnit.Count,
  [METRIC.webhookDeliveries]: MetricUnit.Count,
  [METRIC.webhookFailures]: MetricUnit.Count,
  [METRIC.webhookLatency]: MetricUnit.Milliseconds,
  [METRIC.webhookEndpointsDisabled]: MetricUnit.Count,
};

/** Publishes data points now, in one EMF line; `dimensions` are added to the default ones. */
export const emitMetrics = (points: Partial<Record<MetricName, number>>, dimensions: Record<string, string> = {}): void => {
  const entries = Object.entries(points).filter(
    (entry): entry is [MetricName, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1]),
  );
  if (entries.length === 0) return;
  if (Object.keys(dimensions).length > 0) metrics.addDimensions(dimensions);
  for (const [name, value] of entries) metrics.addMetric(name, UNITS[name], value);
  metrics.publishStoredMetrics();
};

/** Adds `value` (default 1) to a counter, published now. */
export const countMetric = (name: MetricName, value = 1): void => emitMetrics({ [name]: value });
