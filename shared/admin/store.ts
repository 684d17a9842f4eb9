import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '#shared/db/table-def';
import { OPERATOR_CLIENT_CONFIG } from '#shared/sdk-timeouts';

/** Where the operator tools write: any stage's table, given explicitly (functions use shared/db/client.ts). */
export type Store = TableRef;

export const createStore = (table: string, endpoint?: string): Store => ({
  ddb: DynamoDBDocumentClient.from(new DynamoDBClient({ ...OPERATOR_CLIENT_CONFIG, ...(endpoint ? { endpoint } : {}) }), {
    marshallOptions: { removeUndefinedValues: true },
  }),
  table,
});
