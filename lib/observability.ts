import { Aws, Duration } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { Stage } from '#shared/config';
import type { QueueId } from '#shared/db/table-def';
import { METRIC, METRICS_NAMESPACE, METRICS_SERVICE, type MetricName } from '#shared/metric-names';
import type { MerchantFunction } from './merchant-function';
import { WAF_RULES } from './rest-api';

export const FIVE_MINUTES = Duration.minutes(5);
export const SUM = { statistic: 'Sum', period: FIVE_MINUTES };

/** One of the functions' business metrics (shared/metrics.ts), per 5 minutes. */
export const businessMetric = (stage: Stage, name: MetricName, statistic = 'Sum'): Metric =>
  new Metric({ namespace: METRICS_NAMESPACE, metricName: name, dimensionsMap: { service: METRICS_SERVICE, stage }, ...SUM, statistic });
const business = (stage: Stage, name: MetricName, label: string, statistic = 'Sum') =>
  businessMetric(stage, name, statistic).with({ label });

/** A business metric with a dimension of its own besides service and stage: one line per value of it. */
const businessMetricBy = (stage: Stage, dimension: string, name: MetricName, label: string) =>
  new MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},${dimension},service,stage} MetricName="${name}" service="${METRICS_SERVICE}" stage="${stage}"', 'Sum', 300)`,
    label,
    period: FIVE_MINUTES,
  });

/** What a stage's alarms and dashboard watch. */
export type WatchedResources = {
  stage: Stage;
  api: RestApi;
  functions: MerchantFunction[];
  queues: Record<QueueId, Queue>;
  /** Its IteratorAge says how far behind the table's stream it is. */
  changeFeed: MerchantFunction;
};

export type MerchantDashboardProps = WatchedResources & { webAcl: CfnWebACL; alarms: Alarm[] };

/** A graph of a dashboard row, half its width unless told. */
const graph = (title: string, left: IMetric[], right: IMetric[] = [], width = 12) =>
  new GraphWidget({ title, left, right, width, height: 6 });
/** A queue's or the feed's gauge: its maximum each minute. */
const maxPerMinute = (label: string) => ({ statistic: 'Maximum', period: Duration.minutes(1), label });

/** Requests, 4xx and 5xx; p50 and p99 latency. */
const apiRow = ({ api }: MerchantDashboardProps) => [
  graph('API requests, 4xx and 5xx (5 min sums)', [
    api.metricCount({ ...SUM, label: 'requests' }),
    api.metricClientError({ ...SUM, label: '4xx' }),
    api.metricServerError({ ...SUM, label: '5xx' }),
  ]),
  graph('API latency (ms)', [
    api.metricLatency({ statistic: 'p50', period: FIVE_MINUTES, label: 'p50' }),
    api.metricLatency({ statistic: 'p99', period: FIVE_MINUTES, label: 'p99' }),
  ]),
];

/** What WAF blocked per rule; the orders queue, its DLQ and its oldest message. */
const limitsAndQueueRow = (props: MerchantDashboardProps) => {
  const wafBlocked = (rule: string): IMetric =>
    new Metric({
      namespace: 'AWS/WAFV2',
      metricName: 'BlockedRequests',
      dimensionsMap: { WebACL: props.webAcl.name as string, Rule: rule, Region: Aws.REGION },
      label: `blocked by ${rule}`,
      ...SUM,
    });
  return [
    graph('Requests blocked by AWS WAF (rate limits: 429; body size: 413)', WAF_RULES.map(wafBlocked)),
    graph(
      'Orders queue and DLQ',
      [
        props.queues.orders.metricApproximateNumberOfMessagesVisible(maxPerMinute('orders queue: visible')),
        props.queues['orders-dlq'].metricApproximateNumberOfMessagesVisible(maxPerMinute('DLQ: visible')),
      ],
      [props.queues.orders.metricApproximateAgeOfOldestMessage(maxPerMinute('oldest message age (s)'))],
    ),
  ];
};

/** Every function's errors and throttles, one line each. */
const functionsRow = ({ functions }: MerchantDashboardProps) => {
  const perFunction = (metric: 'Errors' | 'Throttles') =>
    functions.map((fn) => (metric === 'Errors' ? fn.fn.metricErrors(SUM) : fn.fn.metricThrottles(SUM)).with({ label: fn.spec.id }));
  return [graph('Function errors', perFunction('Errors')), graph('Function throttles', perFunction('Throttles'))];
};

/** Orders, commissions and their amount; e-mails; how far the change feed is behind, and what it parked. */
const businessRow = (props: MerchantDashboardProps) => [
  graph(
    'Orders and commissions',
    [
      business(props.stage, METRIC.ordersAccepted, 'orders accepted'),
      business(props.stage, METRIC.ordersCancelled, 'orders cancelled'),
      business(props.stage, METRIC.commissionsRecorded, 'commissions recorded'),
    ],
    // Sums of different currencies mean nothing.
    [businessMetricBy(props.stage, 'currency', METRIC.commissionAmount, 'Commission amount (minor units)')],
  ),
  graph(
    'E-mails and the change feed',
    [business(props.stage, METRIC.emailsSent, 'e-mails sent'), business(props.stage, METRIC.emailsFailed, 'e-mails failed')],
    [
      props.changeFeed.fn.metric('IteratorAge', maxPerMinute('change feed behind its stream (ms)')),
      props.queues.parked.metricApproximateNumberOfMessagesVisible(maxPerMinute('parked: visible')),
    ],
  ),
];

/** Webhook deliveries, failures, disabled endpoints and latency, the webhooks DLQ; quota refusals by merchant. */
const webhooksRow = ({ stage, queues }: MerchantDashboardProps) => [
  graph(
    'Webhook deliveries and quota refusals',
    [
      business(stage, METRIC.webhookDeliveries, 'delivered (2xx)'),
      business(stage, METRIC.webhookFailures, 'failed attempts'),
      business(stage, METRIC.webhookEndpointsDisabled, 'endpoints disabled'),
      businessMetricBy(stage, 'merchant', METRIC.quotaRefusals, 'quota refusals (429) by merchant'),
    ],
    [
      business(stage, METRIC.webhookLatency, 'latency p99 (ms)', 'p99'),
      queues['webhooks-dlq'].metricApproximateNumberOfMessagesVisible(maxPerMinute('webhooks DLQ: visible')),
    ],
    24,
  ),
];

/** The stage's CloudWatch dashboard, one row of widgets per concern, and the state of every alarm. */
export class MerchantDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MerchantDashboardProps) {
    super(scope, id);
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: `affiliate-merchant-api-${props.stage}`,
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new TextWidget({
            markdown: `# Affiliate merchant API: ${props.stage}\nAPI, functions, queue and business metrics of the ${props.stage} stage. Alarms notify the stage's SNS topic.`,
            width: 24,
            height: 2,
          }),
        ],
        apiRow(props),
        limitsAndQueueRow(props),
        functionsRow(props),
        businessRow(props),
        webhooksRow(props),
        [new AlarmStatusWidget({ title: 'Alarms', alarms: props.alarms, width: 24, height: 6 })],
      ],
    });
  }
}
