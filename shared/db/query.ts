import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Key, ListIndex, TableRef } from './table-def';

type QueryInput = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>;
type StartKey = Record<string, unknown> | undefined;

/** One page of a Query: at most `limit` items, after `startKey`. */
export const queryPage = ({ ddb, table }: TableRef, input: QueryInput, limit?: number, startKey?: StartKey) =>
  ddb.send(new QueryCommand({ ...input, TableName: table, ...(limit === undefined ? {} : { Limit: limit }), ExclusiveStartKey: startKey }));

/** The pages of one Query from after `startKey`, following LastEvaluatedKey; `limit()` gives the next page's Limit, if any. */
export async function* queryPages(db: TableRef, input: QueryInput, limit: () => number | undefined = () => undefined, startKey?: StartKey) {
  let next = startKey;
  do {
    const page = await queryPage(db, input, limit(), next);
    yield page;
    next = page.LastEvaluatedKey;
  } while (next);
}

/** The items of one Query, continued past its 1 MB pages until there are no more or `limit` were read (never a Scan). */
export const queryItems = async (db: TableRef, input: QueryInput, limit = Number.POSITIVE_INFINITY): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  for await (const page of queryPages(db, input, () => (Number.isFinite(limit) ? limit - items.length : undefined))) {
    items.push(...(page.Items ?? []));
    if (items.length >= limit) break;
  }
  return items;
};

/** A Query of one partition of an index, naming its keys `#pk` and `#sk`, with `sk`'s condition on its sort key if any. */
export const indexQuery = (index: ListIndex, pk: string, sk?: { condition: string; values: Record<string, unknown> }) => ({
  IndexName: index.indexName,
  KeyConditionExpression: sk === undefined ? '#pk = :pk' : `#pk = :pk AND #sk ${sk.condition}`,
  ExpressionAttributeNames: { '#pk': index.partitionKey, ...(sk === undefined ? {} : { '#sk': index.sortKey }) },
  ExpressionAttributeValues: { ':pk': pk, ...sk?.values },
});

/** What a Query of the table's own key takes besides its key condition. */
export type KeyQuery = Pick<QueryCommandInput, 'ProjectionExpression' | 'ExpressionAttributeNames' | 'ConsistentRead' | 'ScanIndexForward'>;

/** Every item of partition `pk`. */
export const queryPartition = (db: TableRef, pk: string, input: KeyQuery = {}) =>
  queryItems(db, { ...input, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } });

/** At most `limit` items of partition `pk` whose sort key lies from `from` to `to`. */
export const queryBetween = (db: TableRef, pk: string, from: string, to: string, input: KeyQuery = {}, limit?: number) => {
  const range = {
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
  };
  return queryItems(db, { ...input, ...range }, limit);
};

/** The item with this key, read by a Query (which the change feed may run where it may not GetItem); undefined when there is none. */
export const queryKey = async (db: TableRef, key: Key, input: KeyQuery = {}): Promise<Record<string, unknown> | undefined> => {
  const item = { KeyConditionExpression: 'pk = :pk AND sk = :sk', ExpressionAttributeValues: { ':pk': key.pk, ':sk': key.sk } };
  return (await queryItems(db, { ...input, ...item }))[0];
};

/** At most `limit` items of partition `pk` whose sort key begins with `prefix`, as a key range (docs/design-notes.md#performance-on-the-local-emulators). */
export const queryKeyPrefix = async (db: TableRef, pk: string, prefix: string, input: KeyQuery = {}, limit?: number) => {
  const last = prefix.codePointAt(prefix.length - 1) ?? 0;
  const items = await queryBetween(db, pk, prefix, `${prefix.slice(0, -1)}${String.fromCodePoint(last + 1)}`, input, limit);
  // BETWEEN takes in the bound itself, which lacks the prefix.
  return items.filter((item) => typeof item.sk === 'string' && item.sk.startsWith(prefix));
};
