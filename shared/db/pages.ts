import type { PageQuery } from '#shared/page-window';
import { isStorableKey, padSeq } from './entities/base';
import { BLOCK_SIZE, type BlockCount, GROUP_SIZE, groupOf, groupTotalKey, readBlockRange, readGroupTotals } from './entities/counter';
import { type ListName, listIndexOf, listPartition } from './entities/list-entry';
import { indexQuery, queryItems } from './query';
import type { TableRef } from './table-def';

type Sequenced = { seq: number };

/** A list of a merchant's, whose items sit on their bucket's list index partition at their sequence number (list-entry.ts). */
export type ListSpec<T extends Sequenced> = {
  merchantId: string;
  list: ListName;
  /** The buckets shown (one status, several statuses, a tier, `all`), merged newest first. */
  buckets: readonly string[];
  parse: (raw: unknown) => T;
};

/** One page of a list, newest first, at the same cost for every page and any list size (docs/design-notes.md#pagination). */
export const readPage = async <T extends Sequenced>(
  db: TableRef,
  spec: ListSpec<T>,
  request: PageQuery,
): Promise<{ total: number; items: T[] }> => {
  const buckets = spec.buckets.filter((bucket) => holdsItems(spec, bucket));
  const counts = await Promise.all(buckets.map((bucket) => readBucketCounts(db, spec, bucket)));
  const groups = new Map<number, number>();
  for (const bucket of counts) for (const [group, n] of bucket.groups) groups.set(group, (groups.get(group) ?? 0) + n);
  const total = [...groups.values()].reduce((sum, n) => sum + n, 0);
  const offset = (request.page - 1) * request.per_page;
  if (offset >= total) return { total, items: [] };

  const start = await locateBlock(db, spec, counts, groups, offset);
  if (start === undefined) return { total, items: [] };
  const { block, n, inBlock } = start;
  const blockTop = (block + 1) * BLOCK_SIZE - 1;
  // Sequence numbers start at 1: block 0 holds 255 of them, every other block 256.
  const full = n === (block === 0 ? BLOCK_SIZE - 1 : BLOCK_SIZE);
  const [top, skip] = full ? [blockTop - inBlock, 0] : [blockTop, inBlock];

  const fetched = await Promise.all(
    buckets.map((bucket) => queryDownFrom(db, spec, bucket, padSeq(top), skip + request.per_page).then((items) => items.map(spec.parse))),
  );
  const merged = fetched.flat().sort((a, b) => b.seq - a.seq);
  return { total, items: merged.slice(skip, skip + request.per_page) };
};

/** Whether a bucket's keys fit DynamoDB's key sizes: a filter value the API takes (255 characters of any plane, URI-encoded) may not. */
const holdsItems = ({ merchantId, list }: ListSpec<Sequenced>, bucket: string) =>
  isStorableKey({ pk: listPartition(merchantId, list, bucket), sk: '' }) && isStorableKey(groupTotalKey(merchantId, list, bucket, 0));

/** One bucket's counts as a page reads them: its newest group's worth of block counts above 0, the group from which they cover every block, items per group. */
const readBucketCounts = async (db: TableRef, spec: ListSpec<Sequenced>, bucket: string) => {
  const [newest, totals] = await Promise.all([
    readBlockRange(db, spec.merchantId, spec.list, bucket, { newestFirst: true, limit: GROUP_SIZE }),
    readGroupTotals(db, spec.merchantId, spec.list, bucket),
  ]);
  const coveredFrom = coveredGroupsFrom(newest);
  const blocks = new Map(newest.filter(({ n }) => n > 0).map(({ block, n }) => [block, n]));
  const groups = new Map<number, number>();
  for (const [group, n] of totals) if (group < coveredFrom) groups.set(group, n);
  for (const [block, n] of blocks) {
    const group = groupOf(block);
    if (group >= coveredFrom) groups.set(group, (groups.get(group) ?? 0) + n);
  }
  return { bucket, blocks, coveredFrom, groups };
};

/** The lowest group whose block items are all among `newest` (the bucket's newest block items, highest first). */
const coveredGroupsFrom = (newest: readonly BlockCount[]): number => {
  const lowest = newest.at(-1);
  if (newest.length < GROUP_SIZE || lowest === undefined) return 0;
  const group = groupOf(lowest.block);
  return newest.filter(({ block }) => groupOf(block) === group).length === GROUP_SIZE ? group : group + 1;
};

/** The block of the item at `offset` (newest first), its merged count and the item's place in it; undefined past stale totals. */
const locateBlock = async (
  db: TableRef,
  spec: ListSpec<Sequenced>,
  counts: readonly Awaited<ReturnType<typeof readBucketCounts>>[],
  groups: ReadonlyMap<number, number>,
  offset: number,
): Promise<{ block: number; n: number; inBlock: number } | undefined> => {
  let before = 0;
  for (const group of [...groups.keys()].sort((a, b) => b - a)) {
    const groupTotal = groups.get(group) ?? 0;
    if (before + groupTotal <= offset) {
      before += groupTotal;
      continue;
    }
    const blocks = await groupBlocks(db, spec, counts, group);
    for (const block of [...blocks.keys()].sort((a, b) => b - a)) {
      const n = blocks.get(block) ?? 0;
      if (before + n > offset) return { block, n, inBlock: offset - before };
      before += n;
    }
    // A total not yet refreshed said more than the group's blocks hold: the offset lies further down.
  }
  return undefined;
};

/** The merged block counts of one group of the shown buckets: read only for the buckets whose blocks of it were not read. */
const groupBlocks = async (db: TableRef, spec: ListSpec<Sequenced>, counts: Parameters<typeof locateBlock>[2], group: number) => {
  const first = group * GROUP_SIZE;
  const last = first + GROUP_SIZE - 1;
  const perBucket = await Promise.all(
    counts.map(async ({ bucket, blocks, coveredFrom }) =>
      group >= coveredFrom
        ? [...blocks].filter(([block]) => groupOf(block) === group).map(([block, n]) => ({ block, n }))
        : readBlockRange(db, spec.merchantId, spec.list, bucket, { from: first, to: last }),
    ),
  );
  const merged = new Map<number, number>();
  for (const blocks of perBucket) for (const { block, n } of blocks) if (n > 0) merged.set(block, (merged.get(block) ?? 0) + n);
  return merged;
};

/** Up to `limit` index items of one bucket with sort key <= top, highest first. */
const queryDownFrom = (db: TableRef, { merchantId, list }: ListSpec<Sequenced>, bucket: string, top: string, limit: number) => {
  const below = indexQuery(listIndexOf(list, bucket), listPartition(merchantId, list, bucket), {
    condition: '<= :top',
    values: { ':top': top },
  });
  return queryItems(db, { ...below, ScanIndexForward: false }, limit);
};
