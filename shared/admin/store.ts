import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
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

/** How many BatchWriteItem calls run at once. */
const PARALLEL_BATCHES = 8;

/** BatchWrite in chunks of 25, PARALLEL_BATCHES at a time, retrying unprocessed items. */
export const putAll = async (store: Store, items: Record<string, unknown>[]) => {
  const chunks: Record<string, unknown>[][] = [];
  for (let start = 0; start < items.length; start += 25) chunks.push(items.slice(start, start + 25));
  let next = 0;
  const lane = async () => {
    while (next < chunks.length) await writeChunk(store, chunks[next++] ?? []);
  };
  await Promise.all(Array.from({ length: PARALLEL_BATCHES }, lane));
};

const writeChunk = async ({ ddb, table }: Store, chunk: Record<string, unknown>[]) => {
  let requests = chunk.map((Item) => ({ PutRequest: { Item } }));
  for (let attempt = 0; requests.length > 0; attempt++) {
    if (attempt > 10) throw new Error('BatchWrite kept returning unprocessed items');
    const { UnprocessedItems } = await ddb.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
    requests = (UnprocessedItems?.[table] ?? []) as typeof requests;
    if (requests.length > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
  }
};
