import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { instrumentClient } from '#shared/aws-clients';
import { requireEnv } from '#shared/config';
import { FUNCTION_CLIENT_CONFIG } from '#shared/sdk-timeouts';
import type { TableRef } from './table-def';

/** Module-scope client and table name: built once per container, reused by every invocation. */
export const TABLE_NAME = requireEnv('TABLE_NAME');

export const ddb = DynamoDBDocumentClient.from(instrumentClient('dynamodb', new DynamoDBClient(FUNCTION_CLIENT_CONFIG.dynamodb)), {
  marshallOptions: { removeUndefinedValues: true },
});

/** This function's table, for code shared with the operator tools (which name theirs). */
export const functionTable: TableRef = { ddb, table: TABLE_NAME };
