import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The single table's shape, shared by the CDK stack and the local runtime so the two cannot drift.
 *
 * - pk/sk: every merchant item lives under `M#<merchantId>` (see entities/base.ts).
 * - gsi1: generic lookup index: token hash -> token; every sequenced list of a merchant (orders,
 *   affiliates, affiliate requests per status, invites) by sequence number (see db/pages.ts).
 * - gsi3: second list index, for items listed under two keys (affiliates per tier).
 * - gsi2: sparse outbox index of owed work: `OUTBOX` orders not yet confirmed on the orders queue,
 *   `NOTIFY` invites and affiliate requests whose e-mail has not gone out yet.
 */
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;

export const GSI1 = { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' } as const;
export const GSI2 = { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'KEYS_ONLY' } as const;

export const GSI3 = { indexName: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', projection: 'ALL' } as const;

export const GLOBAL_INDEXES = [GSI1, GSI2, GSI3] as const;

export type IndexName = (typeof GLOBAL_INDEXES)[number]['indexName'];

/**
 * The table's TTL attribute (epoch seconds). Only idempotency records carry it. DynamoDB deletes
 * expired items lazily (and DynamoDB Local never does), so readers treat an expired item as absent.
 */
export const TTL_ATTRIBUTE = 'expires_at';

export const tableNameForStage = (stage: string): string => `affiliate-merchant-api-${stage}`;
export const ordersQueueNameForStage = (stage: string): string => `affiliate-merchant-api-${stage}-orders`;
export const ordersDlqNameForStage = (stage: string): string => `affiliate-merchant-api-${stage}-orders-dlq`;

/** The commission consumer's timeout (functions/workers.ts): the orders queue's visibility follows from it. */
export const ORDERS_CONSUMER_TIMEOUT_SECONDS = 10;

/**
 * The orders queue's settings, shared by the CDK stack and the local stack: redrive to the DLQ
 * after 5 receives; visibility six times the consumer's timeout (AWS's advice for an event source).
 */
export const ORDERS_QUEUE_SETTINGS = {
  maxReceiveCount: 5,
  visibilityTimeoutSeconds: ORDERS_CONSUMER_TIMEOUT_SECONDS * 6,
} as const;

/**
 * A table to work on and the client to reach it. Functions use their own (shared/db/client.ts
 * `functionTable`); operator tools (seed, admin) name the stage's table explicitly.
 */
export type TableRef = { ddb: DynamoDBDocumentClient; table: string };
