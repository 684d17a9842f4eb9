import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { GSI2, type TableRef } from '../table-def';
import { parseStored, type Key } from './base';

/**
 * Outbox entries: owed work, as a sparse entry on gsi2 of the item that owes it, written in the
 * same write as the change that owes it and removed once the work is done.
 * - `OUTBOX`: an order whose queue message has not been confirmed sent (outbox relay);
 * - `NOTIFY`: an invite or affiliate request whose e-mail has not gone out (notification relay).
 * Only this module spells the gsi2 attributes.
 */
export type OutboxKind = 'OUTBOX' | 'NOTIFY';

export const outboxEntry = (kind: OutboxKind, since: string) => ({ [GSI2.partitionKey]: kind, [GSI2.sortKey]: since });

/** Update-expression parts that set (with the given value names) or remove an item's entry. */
export const OUTBOX_SET = `${GSI2.partitionKey} = :outboxKind, ${GSI2.sortKey} = :outboxSince`;
export const outboxSetValues = (kind: OutboxKind, since: string) => ({ ':outboxKind': kind, ':outboxSince': since });
export const OUTBOX_REMOVE = `${GSI2.partitionKey}, ${GSI2.sortKey}`;
/** Moves an entry's time to :outboxSince (a retry after a failure waits its minimum age again). */
export const OUTBOX_RESCHEDULE = `${GSI2.sortKey} = :outboxSince`;

const entryKey = z.object({ pk: z.string(), sk: z.string() });

/**
 * The keys of up to `limit` items with an entry of `kind` that has waited at least
 * `olderThanSeconds`, oldest first. One Query on the sparse index.
 */
export const outboxEntries = async ({ ddb, table }: TableRef, kind: OutboxKind, olderThanSeconds: number, limit: number): Promise<Key[]> => {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString();
  const { Items = [] } = await ddb.send(
    new QueryCommand({
      TableName: table,
      IndexName: GSI2.indexName,
      KeyConditionExpression: '#pk = :pk AND #sk <= :cutoff',
      ExpressionAttributeNames: { '#pk': GSI2.partitionKey, '#sk': GSI2.sortKey },
      ExpressionAttributeValues: { ':pk': kind, ':cutoff': cutoff },
      Limit: limit,
    }),
  );
  return Items.map((item) => parseStored('outbox entry', entryKey, item));
};

/** Removes an item's outbox entry (its work is done). */
export const clearOutboxEntry = ({ ddb, table }: TableRef, key: Key) =>
  ddb.send(
    new UpdateCommand({
      TableName: table,
      Key: key,
      UpdateExpression: `REMOVE ${OUTBOX_REMOVE}`,
      ConditionExpression: 'attribute_exists(pk)',
    }),
  );
