import * as z from 'zod/mini';
import { indexQuery, queryItems, queryPartition } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { REQUEST_STATUSES } from './affiliate-request';
import { getStored, type Key, merchantIdOf, padSeq, parseStored, updateApplied } from './base';
import {
  BLOCK_SIZE,
  type BlockRef,
  blockCountKey,
  blockCountState,
  blockOf,
  countsPartition,
  derivedCount,
  isDerivedBlock,
  isOrderBucket,
  markForRecount,
  noteHoles,
  parseBlockCountSk,
  parseCountBucketSk,
  readSequences,
  refreshGroupTotals,
} from './counter';
import { ALL_BUCKET, type ListName, listIndexOf, listPartition } from './list-entry';
import { WORK_REMOVE } from './owed-work';
import { getQuota, orderNumberOfQuota } from './quota';

/** Exact, idempotent recounts of list block counts from the list index itself (docs/architecture.md#writing-without-hot-items). */

export type Recount = { list: ListName; bucket: string; block: number; before: number; after: number };

/** How long after its last change a block is recounted at the earliest: the eventually consistent list index must have caught up. */
export const QUIET_BEFORE_RECOUNT_MS = 10_000;

/** When it is (`now`) and how quiet a block must have been (`quietMs`, QUIET_BEFORE_RECOUNT_MS unless given). */
export type RecountTiming = { now?: () => number; quietMs?: number };

/** A Query of the list index of one bucket over the sequence numbers `first` to `last`. */
const listRange = (merchantId: string, list: ListName, bucket: string, first: number, last: number) =>
  indexQuery(listIndexOf(list, bucket), listPartition(merchantId, list, bucket), {
    condition: 'BETWEEN :first AND :last',
    values: { ':first': padSeq(first), ':last': padSeq(last) },
  });

/** What a block's count should be, the items of its bucket's index partition within the block, with when each was written (epoch ms). */
const countBlock = async (db: TableRef, merchantId: string, list: ListName, bucket: string, block: number) => {
  const range = listRange(merchantId, list, bucket, block * BLOCK_SIZE, (block + 1) * BLOCK_SIZE - 1);
  // `updated_at` projected: the read costs what a COUNT costs.
  const items = await queryItems(db, {
    ...range,
    ProjectionExpression: '#updated',
    ExpressionAttributeNames: { ...range.ExpressionAttributeNames, '#updated': 'updated_at' },
  });
  return { count: items.length, written: items.map((item) => Date.parse(String(item.updated_at))) };
};

const readCountState = (db: TableRef, key: Key, projection: string) =>
  getStored(db, 'list count', blockCountState, key, { ConsistentRead: true, ProjectionExpression: projection });

const RECOUNT_ATTEMPTS = 5;

/** Drops a block's recount mark, if any: an open derived block has nothing to recount, and the change feed recounts it as it closes. */
const dropMark = (db: TableRef, key: Key) =>
  updateApplied(db, { Key: key, UpdateExpression: `REMOVE marked_at, ${WORK_REMOVE}`, ConditionExpression: 'attribute_exists(marked_at)' });

/** Sets a block's count to what its index holds: `'marked'` if it changed or an item of it was written within `quietMs`, `'derived'` if open, undefined if it kept changing. */
export const recountBlock = async (
  db: TableRef,
  merchantId: string,
  list: ListName,
  bucket: string,
  block: number,
  { now = Date.now, quietMs = QUIET_BEFORE_RECOUNT_MS }: RecountTiming = {},
): Promise<Recount | 'marked' | 'derived' | undefined> => {
  const key = blockCountKey(merchantId, list, bucket, block);
  const sequence = isOrderBucket(list, bucket) ? orderNumberOfQuota(await getQuota(db, merchantId)) : undefined;
  const derived = sequence !== undefined && isDerivedBlock(block, sequence.derivedFrom);
  if (derived && blockOf(sequence.seq) <= block) {
    await dropMark(db, key);
    return 'derived';
  }
  for (let attempt = 0; attempt < RECOUNT_ATTEMPTS; attempt++) {
    const state = await readCountState(db, key, 'n, marked_at, changed_at, holes, exact');
    // Within the quiet time of now (an imported item dated later than that is no recent write).
    const recent = (time: number) => Math.abs(time - now()) < quietMs;
    // A change within the quiet time may not be in the index yet; an item written within it, not yet in the count.
    const indexed =
      state?.changed_at !== undefined && recent(Date.parse(state.changed_at))
        ? undefined
        : await countBlock(db, merchantId, list, bucket, block);
    if (indexed === undefined || indexed.written.some(recent)) {
      await markForRecount(db, key, new Date(now()).toISOString());
      return 'marked';
    }
    const after = indexed.count;
    const before = state?.n;
    // What the block counted before: a derived one, its numbers less its holes until it was exact.
    const shown = derived ? derivedCount(block, state, sequence.seq) : (before ?? 0);
    if (!derived && state === undefined && after === 0) return { list, bucket, block, before: 0, after };
    const applied = await updateApplied(db, {
      Key: key,
      UpdateExpression: `SET n = :after, v = if_not_exists(v, :zero) + :one, #type = :type${derived ? ', exact = :exact' : ''} REMOVE marked_at, ${WORK_REMOVE}`,
      ConditionExpression: [
        before === undefined ? 'attribute_not_exists(n)' : 'n = :before',
        state?.marked_at === undefined ? 'attribute_not_exists(marked_at)' : 'marked_at = :markedAt',
        // Any ADD since the read (a +1 and a -1 leave n as it was): counted again, not written over.
        ...(state?.changed_at === undefined ? [] : ['changed_at = :changedAt']),
      ].join(' AND '),
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: {
        ':after': after,
        ':zero': 0,
        ':one': 1,
        ':type': 'list_count',
        ...(derived ? { ':exact': true } : {}),
        ...(before === undefined ? {} : { ':before': before }),
        ...(state?.marked_at === undefined ? {} : { ':markedAt': state.marked_at }),
        ...(state?.changed_at === undefined ? {} : { ':changedAt': state.changed_at }),
      },
    });
    if (applied) return { list, bucket, block, before: shown, after };
  }
  return undefined;
};

/** The numbers `first` to `last` of a merchant's orders that the list index names no order for: one Query over just those numbers. */
export const unnamedOrderNumbers = async (db: TableRef, merchantId: string, first: number, last: number): Promise<number[]> => {
  const named = await queryItems(db, { ...listRange(merchantId, 'orders', ALL_BUCKET, first, last), ProjectionExpression: '#sk' });
  const sortKey = listIndexOf('orders', ALL_BUCKET).sortKey;
  const stored = new Set(named.map((raw) => Number(raw[sortKey])));
  const unnamed: number[] = [];
  for (let seq = first; seq <= last; seq++) if (!stored.has(seq)) unnamed.push(seq);
  return unnamed;
};

/** Notes as holes the settled numbers `first` to `last` of a derived order block that name no order; returns how many it noted. */
export const settleOrderNumbers = async (db: TableRef, key: Key, first: number, last: number): Promise<number> => {
  const [state, unnamed] = await Promise.all([
    readCountState(db, key, 'holes, exact'),
    unnamedOrderNumbers(db, merchantIdOf(key.pk), first, last),
  ]);
  if (state?.exact === true) return 0;
  const missing = unnamed.filter((seq) => state?.holes?.has(seq) !== true);
  if (missing.length > 0) await noteHoles(db, key, missing);
  return missing.length;
};

/** Recounts the block whose count item has `key` (a RECOUNT follow-up of the change feed). */
export const recountMarkedBlock = (db: TableRef, key: Key, timing?: RecountTiming): ReturnType<typeof recountBlock> => {
  const { list, bucket, block } = parseBlockCountSk(key.sk);
  return recountBlock(db, merchantIdOf(key.pk), list, bucket, block, timing);
};

/** The buckets every merchant has, whether or not a count item exists for them yet. */
const FIXED_BUCKETS: readonly { list: ListName; bucket: string }[] = [
  { list: 'orders', bucket: ALL_BUCKET },
  { list: 'invites', bucket: ALL_BUCKET },
  { list: 'affiliates', bucket: ALL_BUCKET },
  ...REQUEST_STATUSES.map((status) => ({ list: 'affiliate_requests' as const, bucket: status })),
];

/** Recounts every block of every bucket of one merchant, then refreshes their group totals (docs/operations.md#a-list-total-that-is-off). */
export const recountMerchant = async (db: TableRef, merchantId: string, tierBuckets: readonly string[]) => {
  const [countItems, lastSeq] = await Promise.all([
    queryPartition(db, countsPartition(merchantId), { ProjectionExpression: 'sk' }),
    readSequences(db, merchantId),
  ]);
  const buckets = new Map<string, { list: ListName; bucket: string }>();
  const add = (entry: { list: ListName; bucket: string }) => buckets.set(`${entry.list}#${entry.bucket}`, entry);
  FIXED_BUCKETS.forEach(add);
  for (const bucket of tierBuckets) add({ list: 'affiliates', bucket });
  for (const raw of countItems) add(parseCountBucketSk(parseStored('list count', z.object({ sk: z.string() }), raw).sk));

  const recounts: Recount[] = [];
  const marked: BlockRef[] = [];
  for (const { list, bucket } of buckets.values()) {
    const blocks = Math.floor((lastSeq.get(list) ?? 0) / BLOCK_SIZE) + 1;
    for (let block = 0; block < blocks; block++) {
      const result = await recountBlock(db, merchantId, list, bucket, block);
      if (result === 'marked') marked.push({ list, bucket, block });
      else if (result !== undefined && result !== 'derived') recounts.push(result);
    }
  }
  await refreshGroupTotals(db, merchantId, recounts);
  return { recounts, marked };
};
