import { Annotations, CfnOutput, Duration, RemovalPolicy, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { Stage } from '#shared/config';
import { QUEUE_IDS } from '#shared/db/table-def';
import { MerchantAlarms } from './alarms';
import type { StageConfig } from './config';
import { MerchantData } from './data';
import { type FunctionSpec, functionSpecs, pascalCase } from './function-specs';
import { MerchantFunction } from './merchant-function';
import { suppressStageFindings } from './nag';
import { MerchantDashboard } from './observability';
import { OperatorPolicy } from './operator-policy';
import { MerchantRestApi } from './rest-api';

export type MerchantApiStageProps = StackProps & { stage: Stage; config: StageConfig };

/** One stage of the Merchant API with its own table, queues, functions (from the manifests) and API: a sandbox order never reaches live. */
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

    this.data = new MerchantData(this, 'Data', config);
    const { table, queues } = this.data;

    this.restApi = new MerchantRestApi(this, 'Http', { ...config, removalPolicy });

    // The key that seals merchants' webhook secrets (shared/webhooks/secret-box.ts); readable only by the functions that seal or open them.
    const webhookKey = new Secret(this, 'WebhookKey', {
      description: `Affiliate merchant API (${stage}): the key that seals webhook signing secrets`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy,
    });
    const sesIdentityArn = this.formatArn({ service: 'ses', resource: 'identity', resourceName: config.sesIdentity });
    const environmentValues = {
      STAGE: stage,
      TABLE_NAME: table.tableName,
      queueUrls: Object.fromEntries(QUEUE_IDS.map((id) => [id, queues[id].queueUrl])) as Record<(typeof QUEUE_IDS)[number], string>,
      MAIL_FROM: config.mailFrom,
      INVITE_LINK_BASE_URL: config.inviteLinkBaseUrl,
      AUTH_CACHE_TTL_SECONDS: String(config.authCacheTtlSeconds),
      WEBHOOK_KEY_SECRET_ARN: webhookKey.secretArn,
    };

    const stageWide = { config, removalPolicy, environmentValues, table, queues, webhookKey, sesIdentityArn };
    // Each function of the manifests, behind its route or on its trigger.
    this.functions = functionSpecs().map((spec) => {
      const fn = new MerchantFunction(this, pascalCase(spec.id), { spec, ...stageWide });
      if (spec.kind === 'route') this.restApi.addRoute(spec.route, fn.fn);
      else this.addTrigger(fn, spec.worker.trigger);
      return fn;
    });

    // The change feed's IteratorAge is alarmed and graphed.
    const changeFeed = this.functions.find((fn) => fn.spec.id === 'change-feed');
    if (!changeFeed) throw new Error('functions/workers.ts has no change-feed worker');
    const watched = { stage, api: this.restApi.api, functions: this.functions, queues, changeFeed };
    this.alarms = new MerchantAlarms(this, 'Alarms', { ...config, ...watched });
    this.dashboard = new MerchantDashboard(this, 'Dashboard', { ...watched, webAcl: this.restApi.webAcl, alarms: this.alarms.alarms });
    this.operatorPolicy = new OperatorPolicy(this, 'Operator', { stage, table, queues, sesIdentityArn, mailFrom: config.mailFrom });

    this.addOutputs();

    suppressStageFindings(this.functions, this.restApi.api, webhookKey);
  }

  /** A worker's event source: the table's stream (filtered, failures parked) or its queue. */
  private addTrigger(fn: MerchantFunction, trigger: Extract<FunctionSpec, { kind: 'worker' }>['worker']['trigger']) {
    const { table, queues } = this.data;
    if (trigger.kind === 'table-stream') {
      // Grants the stream read actions (DescribeStream/GetRecords/GetShardIterator/ListStreams) on this table's stream only.
      fn.fn.addEventSource(
        new DynamoEventSource(table, {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: trigger.batchSize,
          maxBatchingWindow: Duration.seconds(trigger.maxBatchingWindowSeconds),
          bisectBatchOnError: true,
          retryAttempts: trigger.retryAttempts < 0 ? undefined : trigger.retryAttempts,
          maxRecordAge: Duration.seconds(trigger.maxRecordAgeSeconds),
          parallelizationFactor: trigger.parallelizationFactor,
          filters: trigger.filterPatterns.map((pattern) => FilterCriteria.filter(pattern)),
          reportBatchItemFailures: true,
          onFailure: new SqsDlq(queues[trigger.onFailure]),
        }),
      );
      return;
    }
    // Grants the consume actions (Receive/Delete/ChangeMessageVisibility/GetQueueAttributes/GetQueueUrl) on this queue only.
    fn.fn.addEventSource(
      new SqsEventSource(queues[trigger.queue], {
        batchSize: trigger.batchSize,
        maxBatchingWindow: Duration.seconds(trigger.maxBatchingWindowSeconds),
        maxConcurrency: trigger.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
  }

  /** What operators and the scripts read from the deployed stack: each output's value and description. */
  private addOutputs() {
    const { table, queues } = this.data;
    const outputs: Record<string, [value: string, description?: string]> = {
      ApiUrl: [this.restApi.api.url, 'Base URL of the API (append /api/v2/...)'],
      TableName: [table.tableName, 'SEED_TABLE_NAME for npm run seed / admin against this stage'],
      OrdersQueueUrl: [queues.orders.queueUrl],
      OrdersDlqUrl: [queues['orders-dlq'].queueUrl],
      FollowUpsQueueUrl: [queues['follow-ups'].queueUrl],
      ParkedQueueUrl: [queues.parked.queueUrl, 'What nothing retries any more (alarmed): read it when ParkedDepth fires'],
      WebhooksDlqUrl: [
        queues['webhooks-dlq'].queueUrl,
        'Webhook delivery messages the deliverer failed on 5 times (alarmed): npm run admin -- webhooks ... to inspect',
      ],
      AlarmTopicArn: [this.alarms.topic.topicArn],
      WebAclArn: [this.restApi.webAcl.attrArn],
      DashboardName: [this.dashboard.dashboard.dashboardName, 'CloudWatch dashboard of this stage'],
      OperatorPolicyArn: [
        this.operatorPolicy.policy.managedPolicyArn,
        'Managed policy with exactly what npm run seed / npm run admin need against this stage: attach it to the operators',
      ],
    };
    for (const [id, [value, description]] of Object.entries(outputs)) new CfnOutput(this, id, { value, description });
  }
}
