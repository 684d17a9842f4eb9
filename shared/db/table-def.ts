import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** The table's shape, one for the CDK stack and the local runtime (docs/architecture.md#data-one-table-keyed-by-merchant). */
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;

export const GSI1 = { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' } as const;
export const GSI2 = { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'KEYS_ONLY' } as const;
export const GSI3 = { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'ALL' } as const;

/** Where a list's items are indexed: a GSI whose sort key is the item's padded sequence number. */
export type ListIndex = { indexName: string; partitionKey: string; sortKey: string };

export const GLOBAL_INDEXES = [GSI1, GSI2, GSI3] as const;

export type IndexName = (typeof GLOBAL_INDEXES)[number]['indexName'];

/** The table's TTL attribute (epoch seconds). DynamoDB deletes expired items lazily (Local never does): readers treat them as absent. */
export const TTL_ATTRIBUTE = 'expires_at';

export const tableNameForStage = (stage: string): string => `affiliate-merchant-api-${stage}`;

export const STREAM_VIEW_TYPE = 'NEW_AND_OLD_IMAGES';

/** The queue consumers' timeout: the consumed queues' visibility follows from it. */
export const ORDERS_CONSUMER_TIMEOUT_SECONDS = 10;
/** The webhook deliverer's timeout: a 15 s delivery plus its reads and writes. */
export const WEBHOOKS_CONSUMER_TIMEOUT_SECONDS = 30;

const WEBHOOK_LANE = {
  redrivesTo: 'webhooks-dlq',
  consumerTimeoutSeconds: WEBHOOKS_CONSUMER_TIMEOUT_SECONDS,
  visibilityTimeouts: 2,
} as const;

/** The stage's queues by id: the variable that hands a function its URL, and where each redrives (docs/architecture.md#deployed-shape). */
export const QUEUES = {
  orders: { envVar: 'ORDERS_QUEUE_URL', redrivesTo: 'orders-dlq', consumerTimeoutSeconds: ORDERS_CONSUMER_TIMEOUT_SECONDS },
  'orders-dlq': { envVar: 'ORDERS_DLQ_URL', redrivesTo: undefined },
  'follow-ups': { envVar: 'FOLLOW_UPS_QUEUE_URL', redrivesTo: 'parked', consumerTimeoutSeconds: ORDERS_CONSUMER_TIMEOUT_SECONDS },
  parked: { envVar: 'PARKED_QUEUE_URL', redrivesTo: undefined },
  webhooks: { envVar: 'WEBHOOKS_QUEUE_URL', ...WEBHOOK_LANE },
  /** The slow lane: deliveries to endpoints not known to answer promptly (webhook-endpoint.ts onSlowLane). */
  'webhooks-slow': { envVar: 'WEBHOOKS_SLOW_QUEUE_URL', ...WEBHOOK_LANE },
  'webhooks-dlq': { envVar: 'WEBHOOKS_DLQ_URL', redrivesTo: undefined },
} as const satisfies Record<
  string,
  { envVar: string; redrivesTo: string | undefined; consumerTimeoutSeconds?: number; visibilityTimeouts?: number }
>;

export type QueueId = keyof typeof QUEUES;
export const QUEUE_IDS = Object.keys(QUEUES) as QueueId[];

/** The queues in the order they can be created: dead-letter queues first, then the queues that redrive to them. */
export const QUEUE_CREATION_ORDER: readonly QueueId[] = [
  ...QUEUE_IDS.filter((id) => QUEUES[id].redrivesTo === undefined),
  ...QUEUE_IDS.filter((id) => QUEUES[id].redrivesTo !== undefined),
];

export const queueNameForStage = (stage: string, queue: QueueId): string => `affiliate-merchant-api-${stage}-${queue}`;

/** A consumed queue's settings: 5 receives, visibility 6 times its consumer's timeout or `visibilityTimeouts` (docs/webhooks.md#how-it-works). */
export const consumedQueueSettings = (queue: QueueId) => {
  const entry = QUEUES[queue];
  const timeout = 'consumerTimeoutSeconds' in entry ? entry.consumerTimeoutSeconds : ORDERS_CONSUMER_TIMEOUT_SECONDS;
  const times = 'visibilityTimeouts' in entry ? entry.visibilityTimeouts : 6;
  return { maxReceiveCount: 5, visibilityTimeoutSeconds: timeout * times };
};

/** A table and the client to reach it: a function's own (client.ts `functionTable`), or the one an operator tool names. */
export type TableRef = { ddb: DynamoDBDocumentClient; table: string };

/** An item's primary key: every item lives in its merchant's partition (`pk`). */
export type Key = { pk: string; sk: string };
