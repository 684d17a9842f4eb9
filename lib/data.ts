import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Stage } from '#shared/config';
import {
  GLOBAL_INDEXES,
  ORDERS_QUEUE_SETTINGS,
  ordersDlqNameForStage,
  ordersQueueNameForStage,
  TABLE_KEYS,
  TTL_ATTRIBUTE,
  tableNameForStage,
} from '#shared/db/table-def';

export type MerchantDataProps = {
  stage: Stage;
  /** Live: deletion protection and RETAIN on the table. */
  retainData: boolean;
};

/**
 * The stage's state: the single table (built from shared/db/table-def.ts, like the local one) and
 * the orders queue with its dead-letter queue (settings shared with the local stack).
 */
export class MerchantData extends Construct {
  readonly table: Table;
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
    });
    for (const index of GLOBAL_INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
      });
    }

    this.dlq = new Queue(this, 'OrdersDlq', {
      queueName: ordersDlqNameForStage(props.stage),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const settings = ORDERS_QUEUE_SETTINGS;
    this.queue = new Queue(this, 'OrdersQueue', {
      queueName: ordersQueueNameForStage(props.stage),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(settings.visibilityTimeoutSeconds),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.dlq, maxReceiveCount: settings.maxReceiveCount },
    });
  }
}
