import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IMetric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC } from '#shared/metric-names';
import type { StageConfig } from './config';
import { businessMetric, FIVE_MINUTES, SUM, type WatchedResources } from './observability';

export type MerchantAlarmsProps = WatchedResources & Pick<StageConfig, 'latencyP99Ms' | 'alarmEmail' | 'alarmTopicArn'>;

export const API_5XX_RATE_THRESHOLD = 0.05;
export const QUEUE_AGE_THRESHOLD_SECONDS = 15 * 60;
/** The change feed this far behind its stream is stuck or failing; records are kept 24 hours, so nothing is lost yet. */
export const FEED_BEHIND_THRESHOLD_SECONDS = 5 * 60;
/** Failed affiliate-program e-mails in 5 minutes (each is retried by a follow-up; any failure is worth a look). */
export const EMAILS_FAILED_THRESHOLD = 1;
/** A merchant outgrowing its quota (or flooding), for ops to look at. */
export const QUOTA_REFUSALS_THRESHOLD = 300;
/** Endpoints disabled in 5 minutes: one is a merchant's problem (they are e-mailed); several at once may be ours. */
export const WEBHOOK_ENDPOINTS_DISABLED_THRESHOLD = 3;

/** A queue's messages waiting: alarmed on any (nothing retries them). */
const depth = (queue: Queue) => queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) });

/** The stage's alarms, each notifying the stage's SNS topic (and `alarmTopicArn` when set). */
export class MerchantAlarms extends Construct {
  readonly topic: Topic;
  readonly alarms: Alarm[] = [];
  private readonly actions: SnsAction[];

  constructor(scope: Construct, id: string, props: MerchantAlarmsProps) {
    super(scope, id);
    this.topic = new Topic(this, 'Topic', { displayName: `Affiliate merchant API (${props.stage}) alarms`, enforceSSL: true });
    if (props.alarmEmail) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    this.actions = [
      new SnsAction(this.topic),
      ...(props.alarmTopicArn ? [new SnsAction(Topic.fromTopicArn(this, 'ExternalTopic', props.alarmTopicArn))] : []),
    ];
    // The API's 5xx rate and p99 latency; every function's errors and throttles.
    this.alarm(
      'Api5xxRate',
      `More than ${API_5XX_RATE_THRESHOLD * 100}% of ${props.stage} API requests answered 5xx in 5 minutes`,
      props.api.metricServerError({ statistic: 'Average', period: FIVE_MINUTES }),
      API_5XX_RATE_THRESHOLD,
    );
    this.alarm(
      'ApiLatencyP99',
      `${props.stage} API p99 latency above ${props.latencyP99Ms} ms in 2 of 3 five-minute periods`,
      props.api.metricLatency({ statistic: 'p99', period: FIVE_MINUTES }),
      props.latencyP99Ms,
      { evaluationPeriods: 3, datapointsToAlarm: 2 },
    );

    for (const fn of props.functions) {
      const what = `${fn.spec.id} (${props.stage})`;
      this.alarm(`${fn.node.id}Errors`, `${what}: invocation errors (crash, timeout, init failure)`, fn.fn.metricErrors(SUM), 1, {
        atLeast: true,
      });
      this.alarm(`${fn.node.id}Throttles`, `${what}: throttled invocations`, fn.fn.metricThrottles(SUM), 1, { atLeast: true });
    }

    // What waits after the request: queues, e-mails, quotas, webhooks and the change feed.
    this.alarm(
      'DlqDepth',
      `${props.stage}: order messages in the dead-letter queue (commission processing failed 5 times)`,
      depth(props.queues['orders-dlq']),
      0,
    );
    this.alarm(
      'QueueAge',
      `${props.stage}: an accepted order waited more than ${QUEUE_AGE_THRESHOLD_SECONDS / 60} minutes for commission processing`,
      props.queues.orders.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: FIVE_MINUTES }),
      QUEUE_AGE_THRESHOLD_SECONDS,
    );

    this.alarm(
      'EmailsFailed',
      `${props.stage}: affiliate-program e-mails SES refused in 5 minutes (they stay owed; their follow-ups retry them)`,
      businessMetric(props.stage, METRIC.emailsFailed),
      EMAILS_FAILED_THRESHOLD,
      { atLeast: true },
    );
    this.alarm(
      'ParkedDepth',
      `${props.stage}: work parked that nothing retries (a follow-up that failed 5 times, or a change record the feed cannot read)`,
      depth(props.queues.parked),
      0,
    );
    this.alarm(
      'QuotaRefusals',
      `${props.stage}: more than ${QUOTA_REFUSALS_THRESHOLD} requests refused by merchants' quotas (429) in each of 3 five-minute periods (the dashboard shows which merchants)`,
      businessMetric(props.stage, METRIC.quotaRefusals),
      QUOTA_REFUSALS_THRESHOLD,
      { evaluationPeriods: 3, datapointsToAlarm: 3 },
    );
    this.alarm(
      'WebhooksDlqDepth',
      `${props.stage}: webhook delivery messages in the dead-letter queue (the deliverer's table or queue work failed 5 times)`,
      depth(props.queues['webhooks-dlq']),
      0,
    );
    this.alarm(
      'WebhookEndpointsDisabled',
      `${props.stage}: the service disabled merchants' webhook endpoints (410 Gone or a 5-day failure streak; the merchants were e-mailed)`,
      businessMetric(props.stage, METRIC.webhookEndpointsDisabled),
      WEBHOOK_ENDPOINTS_DISABLED_THRESHOLD,
      { atLeast: true },
    );
    this.alarm(
      'ChangeFeedBehind',
      `${props.stage}: the change feed is more than ${FEED_BEHIND_THRESHOLD_SECONDS / 60} minutes behind the table's stream (order events and follow-ups wait)`,
      props.changeFeed.fn.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES }),
      FEED_BEHIND_THRESHOLD_SECONDS * 1000,
    );
  }
  /** One alarm, notifying the topics when it fires and when it clears. */
  private alarm(
    alarmId: string,
    description: string,
    metric: IMetric,
    threshold: number,
    options: { evaluationPeriods?: number; datapointsToAlarm?: number; atLeast?: boolean } = {},
  ) {
    const created = new Alarm(this, alarmId, {
      alarmDescription: description,
      metric,
      threshold,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      datapointsToAlarm: options.datapointsToAlarm,
      comparisonOperator: options.atLeast
        ? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        : ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    created.addAlarmAction(...this.actions);
    created.addOkAction(...this.actions);
    this.alarms.push(created);
  }
}
