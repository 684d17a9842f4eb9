import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '#shared/db/table-def';
import type { Key } from './base';

/** BatchGetItem of up to 100 keys, retrying unprocessed keys; results in no particular order. */
export const batchGet = async ({ ddb, table }: TableRef, keys: readonly Key[]): Promise<unknown[]> => {
  const items: unknown[] = [];
  let pending: Key[] = [...keys];
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > 8) throw new Error('BatchGetItem kept returning unprocessed keys');
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    const { Responses, UnprocessedKeys } = await ddb.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending } } }));
    items.push(...(Responses?.[table] ?? []));
    pending = (UnprocessedKeys?.[table]?.Keys ?? []) as Key[];
  }
  return items;
};
