import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { queryKeyPrefix } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { isoNow } from '#shared/time';
import { itemKey, type Key, merchantPk, parseStored } from './base';
import { WORK_SET_KEEPING_SINCE, workSetValues } from './owed-work';

/**
 * Counters of a merchant's lists, all kept with atomic `ADD` (which never conflicts and never
 * joins a transaction, see DESIGN.md "No hot item in a transaction"):
 *
 * - a sequence counter per list (`COUNTER#<list>`): each item of the list takes the next number
 *   when it is created, so list order is creation order and an item's place never moves;
 * - a count item per (list, bucket, block of BLOCK_SIZE sequence numbers), under the merchant's
 *   `#COUNTS` partition: how many items of that block are in the bucket (a status, a tier, `all`).
 *   Every write that adds an item to a bucket or moves it between buckets adds +1/-1 here after it
 *   committed, so page N can find its block from the counts alone (see pages.ts).
 *
 * A sequence number whose create failed after it was taken (lost an order_no race) is simply never
 * counted: the lists have no visible gap, and totals come from the counts, not from the counter.
 */
const listName = z.enum(['orders', 'affiliates', 'affiliate_requests', 'invites']);
export type ListName = z.output<typeof listName>;

export const BLOCK_SIZE = 256;

const SEQUENCE_PREFIX = 'COUNTER#';
const sequenceKey = (merchantId: string, list: ListName) => itemKey(merchantId, `${SEQUENCE_PREFIX}${list}`);

const sequenceItem = z.object({ sk: z.string(), seq: z.number() });

/** The last sequence number each list of a merchant has handed out. One Query of a few items. */
export const readSequences = async (db: TableRef, merchantId: string): Promise<Map<ListName, number>> => {
  const items = await queryKeyPrefix(db, merchantPk(merchantId), SEQUENCE_PREFIX);
  const sequences = new Map<ListName, number>();
  for (const raw of items) {
    const { sk, seq } = parseStored('counter', sequenceItem, raw);
    sequences.set(parseStored('counter', listName, sk.slice(SEQUENCE_PREFIX.length)), seq);
  }
  return sequences;
};

/** Takes `count` consecutive sequence numbers of a list; returns the first. One UpdateItem. */
export const takeSequence = async ({ ddb, table }: TableRef, merchantId: string, list: ListName, count = 1): Promise<number> => {
  const { Attributes } = await ddb.send(
    new UpdateCommand({
      TableName: table,
      Key: sequenceKey(merchantId, list),
      UpdateExpression: 'ADD seq :count SET #type = :type',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':count': count, ':type': 'counter' },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const last = parseStored('counter', z.object({ seq: z.number() }), Attributes).seq;
  return last - count + 1;
};

/** Bucket names come from data (tier slugs): encoded so that one can never prefix another. */
const bucketPrefix = (list: ListName, bucket: string) => `${list}#${encodeURIComponent(bucket)}#`;
export const blockOf = (seq: number) => Math.floor(seq / BLOCK_SIZE);
/** A block number as sort keys spell it: fixed width, so key order is block order. */
export const padBlock = (block: number) => String(block).padStart(8, '0');

export type CountChange = { list: ListName; bucket: string; seq: number; delta: number };

export const countsPartition = (merchantId: string) => `${merchantPk(merchantId)}#COUNTS`;
export const blockCountKey = (merchantId: string, list: ListName, bucket: string, block: number): Key => ({
  pk: countsPartition(merchantId),
  sk: `${bucketPrefix(list, bucket)}${padBlock(block)}`,
});
/** The (list, bucket, block) a count item's sort key names. */
export const parseBlockCountSk = (sk: string): { list: ListName; bucket: string; block: number } => {
  const [list = '', bucket = '', block = ''] = sk.split('#');
  return { list: parseStored('list count', listName, list), bucket: decodeURIComponent(bucket), block: Number(block) };
};

/**
 * Applies count changes, summed per block: one UpdateItem (ADD) per block touched. Called after
 * the write that made the change committed; safe to run concurrently with any other request.
 *
 * `ADD` is not idempotent: an attempt that timed out may have been applied, and the SDK's retry
 * would then apply it twice; one that failed leaves the count one short. Either way the block is
 * marked for an exact recount (count-repair.ts) instead of being trusted. What reaches the caller
 * is only a block that could be neither counted nor marked: an error naming it, for the log.
 */
export const applyCountChanges = async (db: TableRef, merchantId: string, changes: readonly CountChange[]): Promise<void> => {
  const sums = new Map<string, { key: Key; delta: number }>();
  for (const change of changes) {
    const key = blockCountKey(merchantId, change.list, change.bucket, blockOf(change.seq));
    sums.set(key.sk, { key, delta: (sums.get(key.sk)?.delta ?? 0) + change.delta });
  }
  const unsure = await Promise.all(
    [...sums.values()]
      .filter(({ delta }) => delta !== 0)
      .map(async ({ key, delta }) => {
        try {
          const { $metadata } = await db.ddb.send(
            new UpdateCommand({
              TableName: db.table,
              Key: key,
              UpdateExpression: 'ADD n :delta SET #type = :type',
              ExpressionAttributeNames: { '#type': 'type' },
              ExpressionAttributeValues: { ':delta': delta, ':type': 'list_count' },
            }),
          );
          return ($metadata?.attempts ?? 1) > 1 ? key : undefined;
        } catch {
          return key;
        }
      }),
  );
  const toMark = unsure.filter((key): key is Key => key !== undefined);
  const marked = await Promise.allSettled(toMark.map((key) => markForRecount(db, key)));
  const lost = toMark.filter((_, index) => marked[index]?.status === 'rejected');
  if (lost.length > 0) throw new CountNotKept(lost);
};

/**
 * Marks for an exact recount every block the given changes touch, without applying them: for a
 * write that committed while it is unknown whether its count changes were applied (a retry that
 * finds its own applied write, a follow-up that finishes a request that stopped after its commit).
 */
export const markCountsForRecount = async (db: TableRef, merchantId: string, changes: readonly CountChange[]): Promise<void> => {
  const keys = new Map<string, Key>();
  for (const change of changes) {
    const key = blockCountKey(merchantId, change.list, change.bucket, blockOf(change.seq));
    keys.set(`${key.pk} ${key.sk}`, key);
  }
  await Promise.all([...keys.values()].map((key) => markForRecount(db, key)));
};

/** A block count that may be wrong and could not be marked for recount (`npm run admin -- recount`). */
export class CountNotKept extends Error {
  constructor(readonly keys: readonly Key[]) {
    super(`List counts not kept and not marked for recount: ${keys.map((key) => `${key.pk} ${key.sk}`).join(', ')}`);
    this.name = 'CountNotKept';
  }
}

/**
 * Puts a RECOUNT entry (owed-work.ts) on a block's count item: the change feed schedules its
 * recount from the list index (count-repair.ts). One UpdateItem that never conflicts; the entry keeps its first
 * time, `marked_at` its latest, so a recount that started before a newer mark leaves the entry.
 */
export const markForRecount = ({ ddb, table }: TableRef, key: Key, now = isoNow()) =>
  ddb.send(
    new UpdateCommand({
      TableName: table,
      Key: key,
      UpdateExpression: `ADD n :zero SET #type = :type, marked_at = :now, ${WORK_SET_KEEPING_SINCE}`,
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':zero': 0, ':type': 'list_count', ':now': now, ...workSetValues(key, 'RECOUNT', now) },
    }),
  );

const countItem = z.object({ sk: z.string(), n: z.number() });

/**
 * The block counts of one bucket: block number -> items. One Query (continued past 1 MB, which
 * takes about 30,000 blocks, i.e. 7.5 million items); size / BLOCK_SIZE small items at most.
 */
export const readBlockCounts = async (db: TableRef, merchantId: string, list: ListName, bucket: string): Promise<Map<number, number>> => {
  const prefix = bucketPrefix(list, bucket);
  const items = await queryKeyPrefix(db, countsPartition(merchantId), prefix, { ProjectionExpression: 'sk, n' });
  const counts = new Map<number, number>();
  for (const raw of items) {
    const { sk, n } = parseStored('list count', countItem, raw);
    if (n > 0) counts.set(Number(sk.slice(prefix.length)), n);
  }
  return counts;
};
