import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  consumedQueueSettings,
  GLOBAL_INDEXES,
  QUEUE_CREATION_ORDER,
  QUEUES,
  type QueueId,
  queueNameForStage,
  STREAM_VIEW_TYPE,
  TABLE_KEYS,
  TTL_ATTRIBUTE,
  tableNameForStage,
} from '#shared/db/table-def';
import type { StageConfig } from './config';
import { pascalCase } from './function-specs';

export type MerchantDataProps = Pick<StageConfig, 'stage' | 'retainData'>;

/** The stage's table and queues, built from shared/db/table-def.ts like the local stack's. */
export class MerchantData extends Construct {
  readonly table: Table;
  readonly queues: Record<QueueId, Queue>;
  /** The orders queue and its DLQ (shorthands). */
  readonly queue: Queue;
  readonly dlq: Queue;

  constructor(scope: Construct, id: string, props: MerchantDataProps) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      tableName: tableNameForStage(props.stage),
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      deletionProtection: props.retainData,
      removalPolicy: props.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      // Idempotency records expire after 24 hours; DynamoDB deletes them lazily.
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // The change feed (shared/changes/feed.ts) needs each item before and after a write.
      stream: StreamViewType[STREAM_VIEW_TYPE],
    });
    for (const index of GLOBAL_INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
      });
    }

    const queues: Partial<Record<QueueId, Queue>> = {};
    for (const id of QUEUE_CREATION_ORDER) {
      const redrivesTo = QUEUES[id].redrivesTo;
      const target = redrivesTo === undefined ? undefined : queues[redrivesTo];
      // The orders queue keeps its first id.
      queues[id] = new Queue(this, id === 'orders' ? 'OrdersQueue' : pascalCase(id), {
        queueName: queueNameForStage(props.stage, id),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        ...(target
          ? {
              visibilityTimeout: Duration.seconds(consumedQueueSettings(id).visibilityTimeoutSeconds),
              retentionPeriod: Duration.days(4),
              deadLetterQueue: { queue: target, maxReceiveCount: consumedQueueSettings(id).maxReceiveCount },
            }
          : { retentionPeriod: Duration.days(14) }),
      });
    }
    this.queues = queues as Record<QueueId, Queue>;
    this.queue = this.queues.orders;
    this.dlq = this.queues['orders-dlq'];
  }
}
