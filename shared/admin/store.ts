import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '#shared/db/table-def';
import { OPERATOR_CLIENT_CONFIG } from '#shared/sdk-timeouts';

/**
 * Where the operator tools (seed, admin CLI, local runtime) write: any stage's table, given
 * explicitly. Functions use shared/db/client.ts instead, bound to their own table at init.
 */
export type Store = TableRef;

export const createStore = (table: string, endpoint?: string): Store => ({
  ddb: DynamoDBDocumentClient.from(new DynamoDBClient({ ...OPERATOR_CLIENT_CONFIG, ...(endpoint ? { endpoint } : {}) }), {
    marshallOptions: { removeUndefinedValues: true },
  }),
  table,
});
