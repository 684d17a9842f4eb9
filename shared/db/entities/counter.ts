import * as z from 'zod/mini';
import { type KeyQuery, queryBetween, queryKey, queryKeyPrefix } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { isoNow } from '#shared/time';
import { getStored, itemKey, type Key, merchantIdOf, merchantPk, parseStored, StoredItemError, updateApplied, updateItem } from './base';
import { inLanes } from './batch';
import { ALL_BUCKET, type ListName, listName } from './list-entry';
import { WORK_SET_KEEPING_SINCE, workSetValues } from './owed-work';
import {
  type OrderNumber,
  OrderSequenceNotStarted,
  orderSequenceMove,
  readOrderSequence,
  startOrderSequence,
  takeOrderSequence,
} from './quota';

/** Sequence counters, block counts and group totals of a merchant's lists (docs/data-model-heat.md#page-cost-at-any-size). */

export const BLOCK_SIZE = 256;

const SEQUENCE_PREFIX = 'COUNTER#';
const sequenceKey = (merchantId: string, list: ListName) => itemKey(merchantId, `${SEQUENCE_PREFIX}${list}`);

const sequenceItem = z.object({ sk: z.string(), seq: z.number() });

/** The last sequence number each list of a merchant has handed out. One Query of a few items, and the orders' on the quota item. */
export const readSequences = async (db: TableRef, merchantId: string): Promise<Map<ListName, number>> => {
  const [items, orders] = await Promise.all([
    queryKeyPrefix(db, merchantPk(merchantId), SEQUENCE_PREFIX),
    readOrderSequence(db, merchantId),
  ]);
  const sequences = new Map<ListName, number>();
  for (const raw of items) {
    const { sk, seq } = parseStored('counter', sequenceItem, raw);
    sequences.set(parseStored('counter', listName, sk.slice(SEQUENCE_PREFIX.length)), seq);
  }
  if (orders !== undefined) sequences.set('orders', orders.seq);
  return sequences;
};

/** The last order sequence number (0 before the first), read consistently by Query: of the quota item, else of the older counter. */
const readOrdersSequence = async (db: TableRef, merchantId: string): Promise<number> => {
  const orders = await readOrderSequence(db, merchantId);
  if (orders !== undefined) return orders.seq;
  const raw = await queryKey(db, sequenceKey(merchantId, 'orders'), { ConsistentRead: true });
  return raw === undefined ? 0 : parseStored('counter', sequenceItem, raw).seq;
};

/** The blocks of the orders' sequence before and after a write of it (the quota item's, or the older `COUNTER#orders`). */
const orderBlocksMoved = (before: Record<string, unknown> | undefined, after: Record<string, unknown>) => {
  const quotaMove = orderSequenceMove(before, after);
  if (quotaMove) return { from: blockOf(quotaMove.from), to: blockOf(quotaMove.to) };
  return after.type !== 'counter' || after.sk !== `${SEQUENCE_PREFIX}orders`
    ? undefined
    : { from: blockOf(typeof before?.seq === 'number' ? before.seq : 0), to: blockOf(typeof after.seq === 'number' ? after.seq : 0) };
};

/** The order blocks a write of the orders' sequence moved past: no create counts into them any more, so they can be recounted. */
export const closedOrderBlocks = (before: Record<string, unknown> | undefined, after: Record<string, unknown>): Key[] => {
  const move = orderBlocksMoved(before, after);
  if (!move || typeof after.pk !== 'string') return [];
  const { from, to } = move;
  const merchantId = merchantIdOf(after.pk);
  const closed: Key[] = [];
  for (let block = from; block < to; block++) closed.push(orderBlockKey(merchantId, block));
  return closed;
};

/** How far past the older `COUNTER#orders` the quota item's sequence starts, so code still taking from the counter never shares a number. */
export const ORDER_SEQUENCE_GAP = 16_384;

/** Takes `count` consecutive order numbers, returns the first; a first take starts the sequence (docs/architecture.md#writing-without-hot-items). */
export const takeOrderSequenceNumbers = async (db: TableRef, merchantId: string, count = 1, imported = false): Promise<OrderNumber> => {
  try {
    return await takeOrderSequence(db, merchantId, count, imported);
  } catch (error) {
    if (!(error instanceof OrderSequenceNotStarted)) throw error;
  }
  const counter = await getStored(db, 'counter', sequenceItem, sequenceKey(merchantId, 'orders'), true);
  if (counter) await markForRecount(db, orderBlockKey(merchantId, blockOf(counter.seq)));
  const firstNumber = blockOf((counter?.seq ?? 0) + ORDER_SEQUENCE_GAP) * BLOCK_SIZE;
  await startOrderSequence(db, merchantId, firstNumber - 1);
  return takeOrderSequence(db, merchantId, count, imported);
};

/** Takes `count` consecutive sequence numbers of a list; returns the first. One UpdateItem. */
export const takeSequence = async (db: TableRef, merchantId: string, list: ListName, count = 1, imported = false): Promise<number> => {
  if (list === 'orders') return (await takeOrderSequenceNumbers(db, merchantId, count, imported)).seq;
  const { Attributes } = await updateItem(db, {
    Key: sequenceKey(merchantId, list),
    UpdateExpression: 'ADD seq :count SET #type = :type',
    ExpressionAttributeNames: { '#type': 'type' },
    ExpressionAttributeValues: { ':count': count, ':type': 'counter' },
    ReturnValues: 'UPDATED_NEW',
  });
  const last = parseStored('counter', z.object({ seq: z.number() }), Attributes).seq;
  return last - count + 1;
};

/** The group of order blocks a write of the orders' sequence left, as its last block: its total is refreshed then. */
export const closedOrderGroup = (before: Record<string, unknown> | undefined, after: Record<string, unknown>): BlockRef | undefined => {
  const move = orderBlocksMoved(before, after);
  if (!move || groupOf(move.to) <= groupOf(move.from)) return undefined;
  return { list: 'orders', bucket: ALL_BUCKET, block: groupOf(move.to) * GROUP_SIZE - 1 };
};

/** Bucket names come from data (tier slugs): encoded so that one can never prefix another. */
const bucketPrefix = (list: ListName, bucket: string) => `${list}#${encodeURIComponent(bucket)}#`;
export const blockOf = (seq: number) => Math.floor(seq / BLOCK_SIZE);
/** A block (or group) number as sort keys spell it: fixed width, so key order is number order. */
export const padBlock = (block: number) => String(block).padStart(8, '0');
/** The highest block (or group) number a sort key can spell. */
const LAST_NUMBER = 99_999_999;

/** Consecutive blocks summed by one group total: 16,384 sequence numbers. */
export const GROUP_SIZE = 64;
export const groupOf = (block: number) => Math.floor(block / GROUP_SIZE);
/** What sets a group total's sort key apart from a block's (after the bucket prefix): sorts after every digit. */
const GROUP_MARK = 'G#';

export type CountChange = { list: ListName; bucket: string; seq: number; delta: number };
/** What a write adds to (`delta` 1) or takes from (-1) the count of one item's bucket and block. */
export const countChange = (list: ListName, bucket: string, seq: number, delta = 1): CountChange => ({ list, bucket, seq, delta });
export type BlockRef = { list: ListName; bucket: string; block: number };
type BlockRange = Omit<BlockRef, 'block'> & { from: number; to: number };

export const countsPartition = (merchantId: string) => `${merchantPk(merchantId)}#COUNTS`;
const blockCountSk = (list: ListName, bucket: string, block: number) => `${bucketPrefix(list, bucket)}${padBlock(block)}`;
const countKey = (merchantId: string, sk: string): Key => ({ pk: countsPartition(merchantId), sk });
export const blockCountKey = (merchantId: string, list: ListName, bucket: string, block: number) =>
  countKey(merchantId, blockCountSk(list, bucket, block));
const orderBlockKey = (merchantId: string, block: number) => blockCountKey(merchantId, 'orders', ALL_BUCKET, block);
const groupTotalSk = (list: ListName, bucket: string, group: number) => `${bucketPrefix(list, bucket)}${GROUP_MARK}${padBlock(group)}`;
export const groupTotalKey = (merchantId: string, list: ListName, bucket: string, group: number) =>
  countKey(merchantId, groupTotalSk(list, bucket, group));

/** The (list, bucket) of any item of the `#COUNTS` partition: a block count or a group total. */
export const parseCountBucketSk = (sk: string): Omit<BlockRef, 'block'> => {
  const [list = '', bucket = ''] = sk.split('#');
  return { list: parseStored('list count', listName, list), bucket: decodeURIComponent(bucket) };
};

/** The (list, bucket, block) a block count item's sort key names; a group total's key is refused. */
export const parseBlockCountSk = (sk: string): BlockRef => {
  const [, , block = '', ...rest] = sk.split('#');
  if (rest.length > 0 || !/^\d{8}$/.test(block)) throw new StoredItemError(`Not a block count sort key: ${sk}`);
  return { ...parseCountBucketSk(sk), block: Number(block) };
};

const blockSums = (merchantId: string, changes: readonly CountChange[]) => {
  const sums = new Map<string, { key: Key; delta: number }>();
  for (const change of changes) {
    const key = blockCountKey(merchantId, change.list, change.bucket, blockOf(change.seq));
    sums.set(key.sk, { key, delta: (sums.get(key.sk)?.delta ?? 0) + change.delta });
  }
  return [...sums.values()];
};

/** One `ADD` per block; a block whose `ADD` failed or was retried is marked for recount, one neither counted nor marked throws CountNotKept. */
export const applyCountChanges = async (db: TableRef, merchantId: string, changes: readonly CountChange[]): Promise<void> => {
  const now = isoNow();
  const unsure = await Promise.all(
    blockSums(merchantId, changes)
      .filter(({ delta }) => delta !== 0)
      .map(async ({ key, delta }) => {
        try {
          const { $metadata } = await updateCount(db, key, 'ADD n :delta, v :one SET #type = :type, changed_at = :now', {
            ':delta': delta,
            ':one': 1,
            ':now': now,
          });
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

/** Marks for recount every block the changes touch, without applying them: for a write whose count changes may or may not have been applied. */
export const markCountsForRecount = async (db: TableRef, merchantId: string, changes: readonly CountChange[]): Promise<void> => {
  await Promise.all(blockSums(merchantId, changes).map(({ key }) => markForRecount(db, key)));
};

/** A block count that may be wrong and could not be marked for recount (`npm run admin -- recount`). */
export class CountNotKept extends Error {
  constructor(readonly keys: readonly Key[]) {
    super(`List counts not kept and not marked for recount: ${keys.map((key) => `${key.pk} ${key.sk}`).join(', ')}`);
    this.name = 'CountNotKept';
  }
}

/** One UpdateItem of a block count item, which sets its `type`. */
const updateCount = (db: TableRef, key: Key, expression: string, values: Record<string, unknown>) =>
  updateItem(db, {
    Key: key,
    UpdateExpression: expression,
    ExpressionAttributeNames: { '#type': 'type' },
    ExpressionAttributeValues: { ...values, ':type': 'list_count' },
  });

/** Puts a RECOUNT entry (owed-work.ts) on a block's count item, keeping its first time; `ADD n :zero` only creates the item. */
export const markForRecount = (db: TableRef, key: Key, now = isoNow()) =>
  updateCount(db, key, `ADD n :zero SET #type = :type, marked_at = :now, ${WORK_SET_KEEPING_SINCE}`, {
    ':zero': 0,
    ':now': now,
    ...workSetValues(key, 'RECOUNT', now),
  });

const blockItem = z.object({ sk: z.string(), n: z.number() });
export const blockCountState = z.object({
  n: z.optional(z.number()),
  v: z.optional(z.number()),
  /** The block's numbers no order took, as a set: noting one twice (a retried write) changes nothing. */
  holes: z.optional(z.set(z.number())),
  exact: z.optional(z.boolean()),
  marked_at: z.optional(z.string()),
  changed_at: z.optional(z.string()),
});
const orderBlockItem = z.extend(blockCountState, { sk: z.string() });
type OrderBlockItem = z.output<typeof blockCountState> & { block: number };

export type BlockCount = { block: number; n: number };

export const isOrderBucket = (list: ListName, bucket: string) => list === 'orders' && bucket === ALL_BUCKET;

/** Whether an order block's count derives from the sequence, less its `holes` (docs/architecture.md#writing-without-hot-items). */
export const isDerivedBlock = (block: number, derivedFrom: number | undefined) =>
  derivedFrom !== undefined && block * BLOCK_SIZE >= derivedFrom;

/** An order number whose block derives its count: its create writes no count, only a hole when it stores no order. */
export const isDerivedNumber = ({ seq, derivedFrom }: OrderNumber) => isDerivedBlock(blockOf(seq), derivedFrom);

/** How many of the numbers of blocks `from` to `to` the sequence has handed out (numbers start at 1). */
const takenIn = (seq: number, from: number, to: number) =>
  Math.max(0, Math.min(seq, (to + 1) * BLOCK_SIZE - 1) - Math.max(from * BLOCK_SIZE, 1) + 1);

/** A derived block's count: its recount's once it was recounted closed, else the numbers taken in it less its holes. */
export const derivedCount = (block: number, item: Omit<OrderBlockItem, 'block'> | undefined, seq: number) =>
  item?.exact === true ? (item.n ?? 0) : Math.max(0, takenIn(seq, block, block) - (item?.holes?.size ?? 0));

/** The orders' block counts from `from` to `to`: stored below the derived blocks, derived from them to the sequence's block. */
const orderBlockCounts = (
  items: readonly OrderBlockItem[],
  sequence: OrderNumber | undefined,
  { from, to, newestFirst, limit }: { from: number; to: number; newestFirst: boolean; limit?: number },
): BlockCount[] => {
  const derivedFrom = sequence?.derivedFrom;
  const counts = items.filter(({ block }) => !isDerivedBlock(block, derivedFrom)).map(({ block, n }) => ({ block, n: n ?? 0 }));
  if (sequence !== undefined && derivedFrom !== undefined) {
    const stored = new Map(items.map((item) => [item.block, item]));
    for (let block = Math.max(from, blockOf(derivedFrom)); block <= Math.min(to, blockOf(sequence.seq)); block++)
      counts.push({ block, n: derivedCount(block, stored.get(block), sequence.seq) });
  }
  counts.sort((a, b) => (newestFirst ? b.block - a.block : a.block - b.block));
  return limit === undefined ? counts : counts.slice(0, limit);
};

/** Notes an order number that will name no order as a hole of its block, when that block derives its count. */
export const leaveOrderNumberUnused = async (db: TableRef, merchantId: string, number: OrderNumber): Promise<void> => {
  if (!isDerivedNumber(number)) return;
  await noteHoles(db, orderBlockKey(merchantId, blockOf(number.seq)), [number.seq]);
};

/** Adds numbers to an order block's holes: one `ADD` of a set, which also moves the block's version so its group total follows. */
export const noteHoles = (db: TableRef, key: Key, seqs: readonly number[]) =>
  updateCount(db, key, 'ADD holes :holes, v :one SET #type = :type, changed_at = :now', {
    ':holes': new Set(seqs),
    ':one': 1,
    ':now': isoNow(),
  });

/** How long after its take an order number names its order or never will (a route's timeout is 10 s). */
export const ORDER_NUMBER_SETTLE_SECONDS = 60;

/** The numbers a write of the orders' sequence took in derived blocks: per block, its count item and the first and last number. */
export const takenOrderNumbers = (before: Record<string, unknown> | undefined, after: Record<string, unknown>) => {
  const move = orderSequenceMove(before, after);
  const derivedFrom = after.orders_derived_from;
  if (!move || typeof derivedFrom !== 'number' || typeof after.pk !== 'string') return [];
  const merchantId = merchantIdOf(after.pk);
  const taken: { key: Key; first: number; last: number }[] = [];
  for (let first = Math.max(move.from + 1, derivedFrom); first <= move.to; first = (blockOf(first) + 1) * BLOCK_SIZE) {
    const block = blockOf(first);
    taken.push({ key: orderBlockKey(merchantId, block), first, last: Math.min(move.to, (block + 1) * BLOCK_SIZE - 1) });
  }
  return taken;
};

/** The block counts of one bucket from block `from` to block `to`, lowest or (`newestFirst`) highest first, at most `limit`: one Query. */
export const readBlockRange = async (
  db: TableRef,
  merchantId: string,
  list: ListName,
  bucket: string,
  { from = 0, to = LAST_NUMBER, newestFirst = false, limit }: { from?: number; to?: number; newestFirst?: boolean; limit?: number } = {},
): Promise<BlockCount[]> => {
  const orders = isOrderBucket(list, bucket);
  const projection = orders ? 'sk, n, holes, exact' : 'sk, n';
  const input = { ProjectionExpression: projection, ...(newestFirst ? { ScanIndexForward: false } : {}) };
  const [items, sequence] = await readBlockItems(db, merchantId, { list, bucket, from, to }, input, limit);
  if (orders) return orderBlockCounts(parseOrderBlocks(items, list, bucket), sequence, { from, to, newestFirst, limit });
  return parseCounts('list count', items, bucketPrefix(list, bucket));
};

/** The block count items of one bucket from block `from` to `to` (one Query), with the orders' sequence for the orders' bucket. */
const readBlockItems = (db: TableRef, merchantId: string, { list, bucket, from, to }: BlockRange, input: KeyQuery, limit?: number) =>
  Promise.all([
    queryBetween(db, countsPartition(merchantId), blockCountSk(list, bucket, from), blockCountSk(list, bucket, to), input, limit),
    isOrderBucket(list, bucket) ? readOrderSequence(db, merchantId) : undefined,
  ]);

/** Count items (`sk`, `n`) as the block or group number their sort key spells after `prefix`, and their count. */
const parseCounts = (entity: string, items: readonly unknown[], prefix: string): BlockCount[] =>
  items.map((raw) => {
    const { sk, n } = parseStored(entity, blockItem, raw);
    return { block: Number(sk.slice(prefix.length)), n };
  });

const parseOrderBlocks = (items: readonly unknown[], list: ListName, bucket: string): OrderBlockItem[] =>
  items.map((raw) => {
    const { sk, ...item } = parseStored('list count', orderBlockItem, raw);
    return { ...item, block: Number(sk.slice(bucketPrefix(list, bucket).length)) };
  });

/** Every block count of one bucket above 0: block number -> items (the invite e-mail projection's; a page reads `readBlockRange`). */
export const readBlockCounts = async (db: TableRef, merchantId: string, list: ListName, bucket: string): Promise<Map<number, number>> =>
  new Map((await readBlockRange(db, merchantId, list, bucket)).filter(({ n }) => n > 0).map(({ block, n }) => [block, n]));

/** The group totals of one bucket: group number -> items, as fresh as each group's last refresh. */
export const readGroupTotals = async (db: TableRef, merchantId: string, list: ListName, bucket: string): Promise<Map<number, number>> => {
  const [first, last] = [groupTotalSk(list, bucket, 0), groupTotalSk(list, bucket, LAST_NUMBER)];
  const items = await queryBetween(db, countsPartition(merchantId), first, last, { ProjectionExpression: 'sk, n' });
  const totals = parseCounts('list group total', items, `${bucketPrefix(list, bucket)}${GROUP_MARK}`);
  return new Map(totals.map(({ block, n }) => [block, n]));
};

const isOrderBlock = ({ list, bucket }: BlockRef) => isOrderBucket(list, bucket);

/** The changed blocks whose group totals a page reads: not the orders' open group, which a page counts from its blocks. */
export const blocksOfClosedGroups = async (db: TableRef, merchantId: string, blocks: readonly BlockRef[]): Promise<BlockRef[]> => {
  if (!blocks.some(isOrderBlock)) return [...blocks];
  const open = groupOf(blockOf(await readOrdersSequence(db, merchantId)));
  return blocks.filter((block) => !isOrderBlock(block) || groupOf(block.block) < open);
};

const REFRESH_CONCURRENCY = 8;

/** Sets each group total the blocks lie in to what its blocks hold now, over a lower `vs` only (docs/data-model-heat.md#page-cost-at-any-size). */
export const refreshGroupTotals = async (db: TableRef, merchantId: string, blocks: readonly BlockRef[]) => {
  const groups = new Map<string, { list: ListName; bucket: string; group: number }>();
  for (const { list, bucket, block } of blocks) {
    const group = groupOf(block);
    groups.set(groupTotalSk(list, bucket, group), { list, bucket, group });
  }
  const results: NonNullable<Awaited<ReturnType<typeof refreshGroupTotal>>>[] = [];
  const errors: unknown[] = [];
  await inLanes([...groups.values()], REFRESH_CONCURRENCY, async ({ list, bucket, group }) => {
    try {
      const result = await refreshGroupTotal(db, merchantId, list, bucket, group);
      if (result) results.push(result);
    } catch (error) {
      errors.push(error);
    }
  });
  if (errors.length > 0) throw errors[0];
  return results;
};

const refreshGroupTotal = async (db: TableRef, merchantId: string, list: ListName, bucket: string, group: number) => {
  const first = group * GROUP_SIZE;
  const last = first + GROUP_SIZE - 1;
  const orders = isOrderBucket(list, bucket);
  const input = { ProjectionExpression: orders ? 'sk, n, v, holes, exact' : 'n, v', ConsistentRead: true };
  const [items, sequence] = await readBlockItems(db, merchantId, { list, bucket, from: first, to: last }, input);
  let n = 0;
  let vs = 0;
  if (orders) {
    const blocks = parseOrderBlocks(items, list, bucket);
    const counts = orderBlockCounts(blocks, sequence, { from: first, to: last, newestFirst: false });
    if (counts.length === 0) return undefined;
    for (const block of counts) n += block.n;
    // Versions move with holes and recounts; the numbers taken in the group move the derived counts.
    for (const block of blocks) vs += block.v ?? 0;
    if (sequence?.derivedFrom !== undefined) vs += takenIn(sequence.seq, first, last);
  } else {
    if (items.length === 0) return undefined;
    for (const raw of items) {
      const block = parseStored('list count', blockCountState, raw);
      n += block.n ?? 0;
      vs += block.v ?? 0;
    }
  }
  const written = await writeGroupTotal(db, groupTotalKey(merchantId, list, bucket, group), n, vs);
  return { list, bucket, group, n, vs, written };
};

/** Sets a group total over a lower stored `vs` only, so refreshes that race or repeat only move it forward; false when refused. */
const writeGroupTotal = (db: TableRef, key: Key, n: number, vs: number) =>
  updateApplied(db, {
    Key: key,
    UpdateExpression: 'SET #n = :n, #vs = :vs, #type = :type',
    ConditionExpression: 'attribute_not_exists(#vs) OR #vs < :vs',
    ExpressionAttributeNames: { '#n': 'n', '#vs': 'vs', '#type': 'type' },
    ExpressionAttributeValues: { ':n': n, ':vs': vs, ':type': 'list_group_total' },
  });
