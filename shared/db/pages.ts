import { padSeq } from './entities/base';
import { BLOCK_SIZE, type ListName, readBlockCounts } from './entities/counter';
import { queryItems } from './query';
import type { TableRef } from './table-def';

/** Where a list's items are indexed: a GSI whose sort key is the item's padded sequence number. */
export type ListIndex = { indexName: string; partitionKey: string; sortKey: string };

export type PageRequest = { page: number; per_page: number };

export type ListSpec<T> = {
  merchantId: string;
  list: ListName;
  /** The buckets shown (one status, several statuses, a tier, `all`), merged newest first. */
  buckets: readonly string[];
  index: ListIndex;
  /** The index partition of one bucket. */
  partitionOf: (bucket: string) => string;
  parse: (raw: unknown) => T;
  seqOf: (item: T) => number;
};

/**
 * One page of a list, newest first (highest sequence number first), at the same cost for every
 * page and any list size:
 *
 * 1. the block counts of the shown buckets (one Query per bucket, size / 256 small items) give the
 *    exact total and the block in which the page's first item lies;
 * 2. one Query per bucket on the list's index, downwards from the page's first item when the block
 *    is full (the shown buckets hold every sequence number of the block, as for orders, invites
 *    and all affiliates below the newest block: the item `skip` places down the block is then the
 *    number `skip` below its top), else from the top of the block with
 *    Limit = (items of the page that lie in higher positions of the block) + per_page, so at most
 *    255 + per_page items per bucket;
 * 3. the buckets' results merged by sequence number, the page cut out.
 *
 * Counts are adjusted right after each committed change, so a page read in the same moment as a
 * create can be one item off for that moment (like the eventually consistent index itself).
 */
export const readPage = async <T>(db: TableRef, spec: ListSpec<T>, request: PageRequest): Promise<{ total: number; items: T[] }> => {
  const perBucket = await Promise.all(spec.buckets.map((bucket) => readBlockCounts(db, spec.merchantId, spec.list, bucket)));
  const blocks = new Map<number, number>();
  for (const counts of perBucket) for (const [block, n] of counts) blocks.set(block, (blocks.get(block) ?? 0) + n);
  const total = [...blocks.values()].reduce((sum, n) => sum + n, 0);
  const offset = (request.page - 1) * request.per_page;
  if (offset >= total) return { total, items: [] };

  let before = 0;
  let startBlock = 0;
  for (const block of [...blocks.keys()].sort((a, b) => b - a)) {
    const n = blocks.get(block) ?? 0;
    startBlock = block;
    if (before + n > offset) break;
    before += n;
  }
  const blockTop = (startBlock + 1) * BLOCK_SIZE - 1;
  const inBlock = offset - before;
  // Sequence numbers start at 1: block 0 holds 255 of them, every other block 256.
  const full = blocks.get(startBlock) === (startBlock === 0 ? BLOCK_SIZE - 1 : BLOCK_SIZE);
  const [top, skip] = full ? [blockTop - inBlock, 0] : [blockTop, inBlock];

  const fetched = await Promise.all(
    spec.buckets.map((bucket) =>
      queryDownFrom(db, spec.index, spec.partitionOf(bucket), padSeq(top), skip + request.per_page).then((items) => items.map(spec.parse)),
    ),
  );
  const merged = fetched.flat().sort((a, b) => spec.seqOf(b) - spec.seqOf(a));
  return { total, items: merged.slice(skip, skip + request.per_page) };
};

/** Up to `limit` index items of one partition with sort key <= top, highest first. */
const queryDownFrom = (db: TableRef, index: ListIndex, partition: string, top: string, limit: number): Promise<unknown[]> =>
  queryItems(
    db,
    {
      IndexName: index.indexName,
      KeyConditionExpression: '#pk = :pk AND #sk <= :top',
      ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
      ExpressionAttributeValues: { ':pk': partition, ':top': top },
      ScanIndexForward: false,
    },
    limit,
  );
