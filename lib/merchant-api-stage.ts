import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Construct } from 'constructs';
import type { Stage } from '#shared/config';
import { MerchantAlarms } from './alarms';
import type { StageConfig } from './config';
import { MerchantData } from './data';
import { type FunctionSpec, functionEnvironment, functionSpecs } from './function-specs';
import { MerchantFunction } from './merchant-function';
import { suppressStageFindings } from './nag';
import { MerchantDashboard } from './observability';
import { OperatorPolicy } from './operator-policy';
import { MerchantRestApi } from './rest-api';

export type MerchantApiStageProps = StackProps & { stage: Stage; config: StageConfig };

/** `orders-create-legacy` -> `OrdersCreateLegacy`: the construct id of a function. */
export const constructIdOf = (functionId: string) =>
  functionId
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

/**
 * One stage (live or sandbox) of the Merchant API: its own table, queue, functions and API, so a
 * sandbox order can never reach live commission processing. Everything per function is generated
 * from the manifests (lib/function-specs.ts).
 */
export class MerchantApiStage extends Stack {
  readonly stage: Stage;
  readonly data: MerchantData;
  readonly restApi: MerchantRestApi;
  readonly functions: MerchantFunction[];
  readonly alarms: MerchantAlarms;
  readonly dashboard: MerchantDashboard;
  readonly operatorPolicy: OperatorPolicy;

  constructor(scope: Construct, id: string, props: MerchantApiStageProps) {
    super(scope, id, { description: `Affiliate Program Merchant API, ${props.stage} stage`, ...props });
    const { stage, config } = props;
    this.stage = stage;
    Tags.of(this).add('project', 'affiliate-merchant-api');
    Tags.of(this).add('stage', stage);
    for (const key of config.defaulted) {
      Annotations.of(this).addWarningV2(
        `merchant-api:context-${key}`,
        `Context "${key}" is not set: using a placeholder. Set it for a working deployment (see lib/README.md).`,
      );
    }
    const removalPolicy = config.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    const specs = functionSpecs();
    this.data = new MerchantData(this, 'Data', { stage, retainData: config.retainData });
    const { table, queue, dlq } = this.data;

    this.restApi = new MerchantRestApi(this, 'Http', {
      stage,
      throttle: config.throttle,
      wafIpRateLimit: config.wafIpRateLimit,
      ownsApiGatewayAccount: config.ownsApiGatewayAccount,
      logRetention: config.logRetention,
      removalPolicy,
    });

    const sesIdentityArn = this.formatArn({ service: 'ses', resource: 'identity', resourceName: config.sesIdentity });
    const environmentValues = {
      STAGE: stage,
      TABLE_NAME: table.tableName,
      ORDERS_QUEUE_URL: queue.queueUrl,
      ORDERS_DLQ_URL: dlq.queueUrl,
      MAIL_FROM: config.mailFrom,
      INVITE_LINK_BASE_URL: config.inviteLinkBaseUrl,
      AUTH_CACHE_TTL_SECONDS: String(config.authCacheTtlSeconds),
    };

    this.functions = specs.map((spec: FunctionSpec) => {
      const fn = new MerchantFunction(this, constructIdOf(spec.id), {
        spec,
        environment: functionEnvironment(spec, environmentValues),
        logRetention: config.logRetention,
        removalPolicy,
      });
      fn.grantTable(table);
      if (spec.access.queue === 'send') fn.grantQueueSend(queue);
      if (spec.access.deadLetter) fn.grantQueueSend(dlq);
      if (spec.access.mail) fn.grantSendMail(sesIdentityArn, config.mailFrom);
      if (spec.kind === 'route') {
        this.restApi.addRoute(spec.route, fn.fn);
      } else if (spec.worker.trigger.kind === 'schedule') {
        new Rule(this, `${constructIdOf(spec.id)}Schedule`, {
          description: `Runs ${spec.id} every ${spec.worker.trigger.everyMinutes} minute(s)`,
          schedule: Schedule.rate(Duration.minutes(spec.worker.trigger.everyMinutes)),
          // The next run is a minute away: no retries, no stale events.
          targets: [new LambdaFunction(fn.fn, { retryAttempts: 0, maxEventAge: Duration.minutes(1) })],
        });
      } else {
        const trigger = spec.worker.trigger;
        // Grants the consume actions (Receive/Delete/ChangeMessageVisibility/GetQueueAttributes/GetQueueUrl) on this queue only.
        fn.fn.addEventSource(
          new SqsEventSource(queue, {
            batchSize: trigger.batchSize,
            maxBatchingWindow: Duration.seconds(trigger.maxBatchingWindowSeconds),
            maxConcurrency: trigger.maxConcurrency,
            reportBatchItemFailures: true,
          }),
        );
      }
      return fn;
    });

    this.alarms = new MerchantAlarms(this, 'Alarms', {
      stageName: stage,
      api: this.restApi.api,
      functions: this.functions,
      queue,
      dlq,
      latencyP99Ms: config.latencyP99Ms,
      alarmEmail: config.alarmEmail,
      alarmTopicArn: config.alarmTopicArn,
    });
    this.dashboard = new MerchantDashboard(this, 'Dashboard', {
      stage,
      api: this.restApi.api,
      webAcl: this.restApi.webAcl,
      functions: this.functions,
      queue,
      dlq,
      alarms: this.alarms.alarms,
    });
    this.operatorPolicy = new OperatorPolicy(this, 'Operator', {
      stage,
      table,
      ordersQueue: queue,
      dlq,
      sesIdentityArn,
      mailFrom: config.mailFrom,
    });

    new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the API (append /api/v2/...)', value: this.restApi.api.url });
    new CfnOutput(this, 'TableName', {
      description: 'SEED_TABLE_NAME for npm run seed / admin against this stage',
      value: table.tableName,
    });
    new CfnOutput(this, 'OrdersQueueUrl', { value: queue.queueUrl });
    new CfnOutput(this, 'OrdersDlqUrl', { value: dlq.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn });
    new CfnOutput(this, 'WebAclArn', { value: this.restApi.webAcl.attrArn });
    new CfnOutput(this, 'DashboardName', {
      description: 'CloudWatch dashboard of this stage',
      value: this.dashboard.dashboard.dashboardName,
    });
    new CfnOutput(this, 'OperatorPolicyArn', {
      description: 'Managed policy with exactly what npm run seed / npm run admin need against this stage: attach it to the operators',
      value: this.operatorPolicy.policy.managedPolicyArn,
    });

    suppressStageFindings({ functions: this.functions, api: this.restApi.api });
  }
}
