import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Stage } from '#shared/config';
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
import { localClientConfig } from './aws-env';

/** The stage's table with its stream, created from the same definition the CDK stack uses (idempotent); its name and stream ARN. */
export const ensureTable = async (endpoint: string, stage: Stage): Promise<{ table: string; streamArn: string }> => {
  const client = new DynamoDBClient({ endpoint, ...localClientConfig });
  const TableName = tableNameForStage(stage);
  const attributes = [
    TABLE_KEYS.partitionKey,
    TABLE_KEYS.sortKey,
    ...GLOBAL_INDEXES.flatMap((index) => [index.partitionKey, index.sortKey]),
  ];
  try {
    await client.send(
      new CreateTableCommand({
        TableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributes.map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: index.projection },
        })),
        StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE },
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  let { Table } = await client.send(new DescribeTableCommand({ TableName }));
  // A table kept from before the change feed (npm start keeps its data) gets its stream now.
  if (!Table?.StreamSpecification?.StreamEnabled) {
    await client.send(
      new UpdateTableCommand({ TableName, StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW_TYPE } }),
    );
    ({ Table } = await client.send(new DescribeTableCommand({ TableName })));
  }
  const streamArn = Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`DynamoDB gave table ${TableName} no stream`);
  // The deployed table's TTL setting (DynamoDB Local records it but never deletes anything).
  const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName }));
  if (TimeToLiveDescription?.TimeToLiveStatus !== 'ENABLED') {
    await client.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }));
  }
  return { table: TableName, streamArn };
};

export type StageQueues = {
  /** Every queue of the stage, by id (table-def.ts QUEUES). */
  queueUrls: Record<QueueId, string>;
  /** Shorthands: the orders queue and its DLQ. */
  ordersQueueUrl: string;
  dlqUrl: string;
};

/** The stage's queues, with the deployed settings: dead-letter queues first, then the queues that redrive to them. */
export const ensureQueues = async (endpoint: string, stage: Stage): Promise<StageQueues> => {
  const client = new SQSClient({ endpoint, useQueueUrlAsEndpoint: false, ...localClientConfig });
  const urls: Partial<Record<QueueId, string>> = {};
  for (const id of QUEUE_CREATION_ORDER) {
    const redrivesTo = QUEUES[id].redrivesTo;
    let attributes: Record<string, string> = {};
    if (redrivesTo !== undefined) {
      const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: urls[redrivesTo], AttributeNames: ['QueueArn'] }));
      attributes = {
        VisibilityTimeout: String(consumedQueueSettings(id).visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: Attributes?.QueueArn,
          maxReceiveCount: String(consumedQueueSettings(id).maxReceiveCount),
        }),
      };
    }
    const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: queueNameForStage(stage, id), Attributes: attributes }));
    if (!QueueUrl) throw new Error('SQS emulator returned no queue URL');
    urls[id] = QueueUrl;
  }
  const queueUrls = urls as Record<QueueId, string>;
  return { queueUrls, ordersQueueUrl: queueUrls.orders, dlqUrl: queueUrls['orders-dlq'] };
};
