import * as z from 'zod/mini';
import { queryPage } from '#shared/db/query';
import { GSI2, type TableRef } from '#shared/db/table-def';
import { type Key, merchantIdOf, merchantPk, parseStored } from './base';

/** Owed work: a sparse gsi2 entry of the item that owes it, by when due (docs/architecture.md#data-one-table-keyed-by-merchant). */
const WORK_KINDS = ['NOTIFY', 'PARKED', 'RECOUNT'] as const;
export type WorkKind = (typeof WORK_KINDS)[number];

export const workPartition = (merchantId: string, kind: WorkKind) => `${merchantPk(merchantId)}#${kind}`;

export const workEntry = (key: Key, kind: WorkKind, since: string) => ({
  [GSI2.partitionKey]: workPartition(merchantIdOf(key.pk), kind),
  [GSI2.sortKey]: since,
});

/** Update-expression parts that set (with the values of workSetValues) or remove an item's entry. */
export const WORK_SET = `${GSI2.partitionKey} = :workPartition, ${GSI2.sortKey} = :workSince`;
export const workSetValues = (key: Key, kind: WorkKind, since: string) => ({
  ':workPartition': workPartition(merchantIdOf(key.pk), kind),
  ':workSince': since,
});
/** Like WORK_SET, but an entry already there keeps its (older) time. */
export const WORK_SET_KEEPING_SINCE = `${GSI2.partitionKey} = :workPartition, ${GSI2.sortKey} = if_not_exists(${GSI2.sortKey}, :workSince)`;
export const WORK_REMOVE = `${GSI2.partitionKey}, ${GSI2.sortKey}`;

/** The kind of owed work an item's entry names, from its stored attributes (a change-feed image). */
export const workKindOf = (item: Record<string, unknown>): WorkKind | undefined => {
  const partition = item[GSI2.partitionKey];
  if (typeof partition !== 'string') return undefined;
  const kind = partition.slice(partition.lastIndexOf('#') + 1);
  return WORK_KINDS.find((known) => known === kind);
};

export const workDueOf = (item: Record<string, unknown>): string | undefined => {
  const due = item[GSI2.sortKey];
  return typeof due === 'string' ? due : undefined;
};

const entryKey = z.object({ pk: z.string(), sk: z.string() });

/** One page of the keys of a merchant's items with an entry of `kind` due at least `olderThanSeconds` ago, oldest first. */
export const workPage = async (
  db: TableRef,
  merchantId: string,
  kind: WorkKind,
  olderThanSeconds: number,
  limit: number,
  startKey?: Record<string, unknown>,
): Promise<{ keys: Key[]; next: Record<string, unknown> | undefined }> => {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString();
  const query = {
    IndexName: GSI2.indexName,
    KeyConditionExpression: `${GSI2.partitionKey} = :pk AND ${GSI2.sortKey} <= :cutoff`,
    ExpressionAttributeValues: { ':pk': workPartition(merchantId, kind), ':cutoff': cutoff },
  };
  const { Items = [], LastEvaluatedKey } = await queryPage(db, query, limit, startKey);
  return { keys: Items.map((item) => parseStored('owed work entry', entryKey, item)), next: LastEvaluatedKey };
};
