import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from './table-def';

/**
 * The items of one Query, continued past DynamoDB's 1 MB pages until there are no more or
 * `limit` items were read. Every multi-page read of the table goes through here (never a Scan).
 */
export const queryItems = async (
  { ddb, table }: TableRef,
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
  limit = Number.POSITIVE_INFINITY,
): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(
      new QueryCommand({
        ...input,
        TableName: table,
        ...(Number.isFinite(limit) ? { Limit: limit - items.length } : {}),
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey && items.length < limit);
  return items;
};
