import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { GSI2, type TableRef } from '#shared/db/table-def';
import { type Key, parseStored } from './base';

/**
 * Outbox entries: owed work, as a sparse entry on gsi2 of the item that owes it, written in the
 * same write as the change that owes it and removed once the work is done.
 * - `OUTBOX`: an order whose queue message has not been confirmed sent (outbox relay);
 * - `NOTIFY`: an invite or affiliate request whose e-mail has not gone out (notification relay);
 * - `PARKED`: such an e-mail that failed too often: no relay retries it, `npm run admin --
 *   resend-notifications` finds it here;
 * - `RECOUNT`: a list's block count that may be off (its `ADD` failed or was retried): the
 *   count-repair worker recounts the block from the list index (count-repair.ts).
 * Only this module spells the gsi2 attributes.
 */
export type OutboxKind = 'OUTBOX' | 'NOTIFY' | 'PARKED' | 'RECOUNT';

export const outboxEntry = (kind: OutboxKind, since: string) => ({ [GSI2.partitionKey]: kind, [GSI2.sortKey]: since });

/** Update-expression parts that set (with the given value names) or remove an item's entry. */
export const OUTBOX_SET = `${GSI2.partitionKey} = :outboxKind, ${GSI2.sortKey} = :outboxSince`;
export const outboxSetValues = (kind: OutboxKind, since: string) => ({ ':outboxKind': kind, ':outboxSince': since });
/** Like OUTBOX_SET, but an entry already there keeps its (older) time. */
export const OUTBOX_SET_KEEPING_SINCE = `${GSI2.partitionKey} = :outboxKind, ${GSI2.sortKey} = if_not_exists(${GSI2.sortKey}, :outboxSince)`;
export const OUTBOX_REMOVE = `${GSI2.partitionKey}, ${GSI2.sortKey}`;

const entryKey = z.object({ pk: z.string(), sk: z.string() });

/**
 * One page of the keys of items with an entry of `kind` due at least `olderThanSeconds` ago,
 * oldest first, continuing after `startKey`, so a reader can walk the index once instead of
 * re-reading its head. One Query on the sparse index.
 */
export const outboxPage = async (
  { ddb, table }: TableRef,
  kind: OutboxKind,
  olderThanSeconds: number,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<{ keys: Key[]; next: Record<string, unknown> | undefined }> => {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString();
  const { Items = [], LastEvaluatedKey } = await ddb.send(
    new QueryCommand({
      TableName: table,
      IndexName: GSI2.indexName,
      KeyConditionExpression: `${GSI2.partitionKey} = :pk AND ${GSI2.sortKey} <= :cutoff`,
      ExpressionAttributeValues: { ':pk': kind, ':cutoff': cutoff },
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    }),
  );
  return { keys: Items.map((item) => parseStored('outbox entry', entryKey, item)), next: LastEvaluatedKey };
};

/** The first `limit` keys of items with an entry of `kind` due at least `olderThanSeconds` ago. */
export const outboxEntries = async (db: TableRef, kind: OutboxKind, olderThanSeconds: number, limit: number): Promise<Key[]> =>
  (await outboxPage(db, kind, olderThanSeconds, limit)).keys;

/** When the oldest entry of `kind` became due (undefined when there is none): one Query of one key. */
export const oldestOutboxEntry = async ({ ddb, table }: TableRef, kind: OutboxKind): Promise<string | undefined> => {
  const { Items = [] } = await ddb.send(
    new QueryCommand({
      TableName: table,
      IndexName: GSI2.indexName,
      KeyConditionExpression: `${GSI2.partitionKey} = :pk`,
      ExpressionAttributeValues: { ':pk': kind },
      Limit: 1,
    }),
  );
  const since = Items[0]?.[GSI2.sortKey];
  return typeof since === 'string' ? since : undefined;
};

/** Removes an item's outbox entry (its work is done). */
export const clearOutboxEntry = ({ ddb, table }: TableRef, key: Key, abortSignal?: AbortSignal) =>
  ddb.send(
    new UpdateCommand({
      TableName: table,
      Key: key,
      UpdateExpression: `REMOVE ${OUTBOX_REMOVE}`,
      ConditionExpression: 'attribute_exists(pk)',
    }),
    { abortSignal },
  );
