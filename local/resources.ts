import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
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
import { localClientConfig } from './aws-env';

/** The stage's table, created from the same definition the CDK stack uses (idempotent). */
export const ensureTable = async (endpoint: string, stage: Stage): Promise<string> => {
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
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await client.send(new DescribeTableCommand({ TableName }));
  // The deployed table's TTL setting (DynamoDB Local records it but never deletes anything).
  const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName }));
  if (TimeToLiveDescription?.TimeToLiveStatus !== 'ENABLED') {
    await client.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }));
  }
  return TableName;
};

export type StageQueues = { ordersQueueUrl: string; dlqUrl: string };

/** The stage's orders queue and its dead-letter queue, with the deployed settings. */
export const ensureQueues = async (endpoint: string, stage: Stage): Promise<StageQueues> => {
  const client = new SQSClient({ endpoint, useQueueUrlAsEndpoint: false, ...localClientConfig });
  const { QueueUrl: dlqUrl } = await client.send(new CreateQueueCommand({ QueueName: ordersDlqNameForStage(stage) }));
  const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }));
  const settings = ORDERS_QUEUE_SETTINGS;
  const { QueueUrl: ordersQueueUrl } = await client.send(
    new CreateQueueCommand({
      QueueName: ordersQueueNameForStage(stage),
      Attributes: {
        VisibilityTimeout: String(settings.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: String(settings.maxReceiveCount) }),
      },
    }),
  );
  if (!ordersQueueUrl || !dlqUrl) throw new Error('SQS emulator returned no queue URL');
  return { ordersQueueUrl, dlqUrl };
};
