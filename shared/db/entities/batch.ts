import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '#shared/db/table-def';
import { UnprocessedBatch } from '#shared/dependency-errors';
import type { Key } from './base';

/** Sends `items` in one batch call, then what each answer left unprocessed, with back-off; throws after 9 calls (a 503). */
const untilAllProcessed = async <T>(operation: string, items: readonly T[], send: (pending: T[]) => Promise<T[]>) => {
  let pending = [...items];
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > 8) throw new UnprocessedBatch(`${operation} kept returning unprocessed items`);
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
    pending = await send(pending);
  }
};

/** BatchGetItem, 100 keys a call, retrying unprocessed keys; results in no particular order. */
export const batchGet = async ({ ddb, table }: TableRef, keys: readonly Key[]): Promise<unknown[]> => {
  const items: unknown[] = [];
  for (let start = 0; start < keys.length; start += 100) {
    await untilAllProcessed('BatchGetItem', keys.slice(start, start + 100), async (pending) => {
      const { Responses, UnprocessedKeys } = await ddb.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending } } }));
      items.push(...(Responses?.[table] ?? []));
      return (UnprocessedKeys?.[table]?.Keys ?? []) as Key[];
    });
  }
  return items;
};

const PARALLEL_BATCHES = 8;

type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Key } };

const writeChunk = ({ ddb, table }: TableRef, chunk: readonly WriteRequest[]) =>
  untilAllProcessed('BatchWriteItem', chunk, async (requests) => {
    const { UnprocessedItems } = await ddb.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
    return (UnprocessedItems?.[table] ?? []) as WriteRequest[];
  });

/** Runs `run` on every item, at most `lanes` at once, each lane taking the next item when it is done; a failure stops its lane. */
export const inLanes = async <T>(items: readonly T[], lanes: number, run: (item: T) => Promise<unknown>): Promise<void> => {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
};

/** Runs the write requests with BatchWriteItem, 25 a call and a few calls at once, retrying unprocessed ones. */
const batchWrite = async (db: TableRef, requests: readonly WriteRequest[]): Promise<void> => {
  const chunks: WriteRequest[][] = [];
  for (let start = 0; start < requests.length; start += 25) chunks.push(requests.slice(start, start + 25));
  await inLanes(chunks, PARALLEL_BATCHES, (chunk) => writeChunk(db, chunk));
};

const putRequest = (Item: Record<string, unknown>): WriteRequest => ({ PutRequest: { Item } });
const deleteRequest = (Key: Key): WriteRequest => ({ DeleteRequest: { Key } });

export const batchPut = (db: TableRef, items: readonly Record<string, unknown>[]) => batchWrite(db, items.map(putRequest));
export const batchDelete = (db: TableRef, keys: readonly Key[]) => batchWrite(db, keys.map(deleteRequest));
