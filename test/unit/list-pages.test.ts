/**
 * The bounded page read (shared/db/pages.ts) against a table that behaves like DynamoDB: block
 * counts per (list, bucket, 256 sequence numbers) and group totals per 64 blocks in the COUNTS
 * partition (support/counts.ts), and index partitions answering a key-range Query highest first,
 * at most Limit items and at most 100 per response (as if 1 MB were reached), continued with
 * ExclusiveStartKey. Every page of every status combination is compared with the list sorted in
 * memory, over four groups, with sparse and full blocks and unused sequence numbers; then what a
 * page reads, and what it does with group totals that are missing or not yet refreshed.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { functionTable } from '#shared/db/client';
import { type AffiliateRequestStatus, affiliateRequestList, affiliateRequestRecord } from '#shared/db/entities/affiliate-request';
import { readPage } from '#shared/db/pages';
import { ddbMock, resetAwsMocks } from './support/aws';
import { blockSk, type CountItem, groupSk, stubCountsPartition } from './support/counts';

const MERCHANT_ID = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';
const COUNTS_PK = `M#${MERCHANT_ID}#COUNTS`;
const STATUSES: AffiliateRequestStatus[] = ['pending', 'accepted', 'declined'];
const GROUP_SEQS = 64 * 256;

type Stored = ReturnType<typeof affiliateRequestRecord>;

const request = (seq: number) =>
  affiliateRequestRecord(
    MERCHANT_ID,
    {
      seq,
      status: STATUSES[(seq + Math.floor(seq / 13)) % 3] as AffiliateRequestStatus,
      affiliate: { slug: `a${seq}`, name: `A ${seq}`, email: `a${seq}@x.example` },
    },
    '2026-03-01T00:00:00.000Z',
  );

/**
 * Sequence numbers up to 60,000 (groups 0 to 3): every 37th in use (sparse blocks), all of
 * 20,000-20,800 (full blocks in group 1), and the newest thousand but every 11th (numbers taken by
 * creates that lost their race).
 */
const population = (): Stored[] =>
  Array.from({ length: 60_000 }, (_, index) => index + 1)
    .filter((seq) => seq % 37 === 0 || (seq >= 20_000 && seq <= 20_800) || (seq > 59_000 && seq % 11 !== 0))
    .map(request);

let stored: Stored[] = [];
/** Group totals that differ from what a refresh would write now: `status#group` -> n, or null for none. */
let groupOverrides = new Map<string, number | null>();

/** The COUNTS partition as the writes and refreshes leave it: block counts, then group totals. */
const countItems = (): CountItem[] => {
  const blocks = new Map<string, number>();
  const groups = new Map<string, number>();
  for (const item of stored) {
    const bucket = `affiliate_requests#${item.status}`;
    const block = Math.floor(item.seq / 256);
    blocks.set(blockSk(bucket, block), (blocks.get(blockSk(bucket, block)) ?? 0) + 1);
    groups.set(`${item.status}#${Math.floor(block / 64)}`, (groups.get(`${item.status}#${Math.floor(block / 64)}`) ?? 0) + 1);
  }
  for (const [key, n] of groupOverrides) if (n !== null) groups.set(key, n);
  for (const [key, n] of groupOverrides) if (n === null) groups.delete(key);
  return [
    ...[...blocks].map(([sk, n]) => ({ sk, n, v: n })),
    ...[...groups].map(([key, n]) => {
      const [status = '', group = ''] = key.split('#');
      return { sk: groupSk(`affiliate_requests#${status}`, Number(group)), n, vs: n };
    }),
  ];
};

const indexQueries = () => ddbMock.commandCalls(QueryCommand, { IndexName: 'gsi1' });
const countQueries = () =>
  ddbMock.commandCalls(QueryCommand, { ExpressionAttributeValues: { ':pk': COUNTS_PK } }).map((call) => call.args[0].input);
const seqsOf = (statuses: readonly AffiliateRequestStatus[]) =>
  stored
    .filter((item) => statuses.includes(item.status))
    .map((item) => item.seq)
    .sort((a, b) => b - a);
const groupOfSeq = (seq: number) => Math.floor(seq / GROUP_SEQS);
const pageOf = (statuses: AffiliateRequestStatus[], page: number, perPage: number) =>
  readPage(functionTable, affiliateRequestList(MERCHANT_ID, statuses), { page, per_page: perPage });

beforeEach(() => {
  resetAwsMocks();
  stored = population();
  groupOverrides = new Map();
  stubCountsPartition(COUNTS_PK, countItems);
  ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).callsFake(async (input: QueryCommandInput) => {
    const values = input.ExpressionAttributeValues as Record<string, string>;
    const top = values[':top'] as string;
    const below = input.ExclusiveStartKey ? String(input.ExclusiveStartKey.gsi1sk) : undefined;
    const matching = stored
      .filter((item) => item.gsi1pk === values[':pk'] && item.gsi1sk <= top && (below === undefined || item.gsi1sk < below))
      .sort((a, b) => b.gsi1sk.localeCompare(a.gsi1sk));
    const page = matching.slice(0, Math.min(input.Limit ?? Infinity, 100));
    const more = page.length < matching.length && page.length === 100;
    return {
      Items: page,
      ...(more
        ? { LastEvaluatedKey: { pk: page.at(-1)?.pk, sk: page.at(-1)?.sk, gsi1pk: values[':pk'], gsi1sk: page.at(-1)?.gsi1sk } }
        : {}),
    };
  });
});

describe('readPage over block counts and group totals', () => {
  it.each([
    [['pending']],
    [['declined']],
    [['pending', 'declined']],
    [['accepted', 'pending', 'declined']],
  ] as AffiliateRequestStatus[][][])(
    'gives every page of the statuses %j exactly, newest first, with the exact total, over four groups',
    async (statuses) => {
      // Prepare
      const expected = seqsOf(statuses);
      expect(new Set(expected.map(groupOfSeq))).toEqual(new Set([0, 1, 2, 3]));
      const perPage = 37;
      const pages = Math.ceil(expected.length / perPage);

      // Act
      const read = [];
      for (let page = 1; page <= pages + 1; page++) read.push(await pageOf(statuses, page, perPage));

      // Assess
      expect(read.map((result) => result.total)).toEqual(Array<number>(pages + 1).fill(expected.length));
      expect(read.slice(0, -2).every((result) => result.items.length === perPage)).toBe(true);
      expect(read.at(-1)?.items).toEqual([]);
      expect(read.flatMap((result) => result.items.map((item) => item.seq))).toEqual(expected);
    },
    // Hundreds of pages through the mocked client: seconds on a busy 2-core machine (it timed out at 5 s in a full run).
    30_000,
  );

  it.each([1, 30, 60])(
    'reads page %i of three statuses with per status: the group totals, the newest 64 block counts, at most one group of block counts, one index range (plus continuations past 1 MB)',
    async (page) => {
      // Act
      const result = await pageOf(['pending', 'accepted', 'declined'], page, 25);

      // Assess
      expect(result.items).toHaveLength(25);
      const queries = countQueries();
      const groupReads = queries.filter((input) => String(input.ExpressionAttributeValues?.[':from']).includes('#G#'));
      const newestReads = queries.filter((input) => input.Limit === 64);
      const groupBlockReads = queries.filter((input) => !groupReads.includes(input) && !newestReads.includes(input));
      expect(groupReads).toHaveLength(3);
      expect(newestReads).toHaveLength(3);
      expect(newestReads.every((input) => input.ScanIndexForward === false)).toBe(true);
      expect(groupBlockReads.length).toBeLessThanOrEqual(3);
      for (const input of groupBlockReads) {
        const from = Number(String(input.ExpressionAttributeValues?.[':from']).slice(-8));
        const to = Number(String(input.ExpressionAttributeValues?.[':to']).slice(-8));
        expect([from % 64, to - from]).toEqual([0, 63]);
      }
      // One range per status (continued where the mock's 100-item "1 MB" cuts it).
      expect(indexQueries().filter((call) => call.args[0].input.ExclusiveStartKey === undefined)).toHaveLength(3);
      for (const call of indexQueries()) expect(call.args[0].input.Limit).toBeLessThanOrEqual(255 + 25);
    },
  );

  it('counts an older group from its group total, without reading its blocks, for a page of the newest group', async () => {
    // Prepare: group 0's total of pending requests is 5 higher than its blocks (not yet refreshed).
    const expected = seqsOf(['pending']);
    const inGroup0 = expected.filter((seq) => groupOfSeq(seq) === 0).length;
    groupOverrides.set('pending#0', inGroup0 + 5);

    // Act
    const result = await pageOf(['pending'], 1, 10);

    // Assess
    expect(result.total).toBe(expected.length + 5);
    expect(result.items.map((item) => item.seq)).toEqual(expected.slice(0, 10));
    const blockReadsOfGroup0 = countQueries().filter(
      (input) => input.ExpressionAttributeValues?.[':to'] === blockSk('affiliate_requests#pending', 63),
    );
    expect(blockReadsOfGroup0).toEqual([]);
  });

  it("reads an older group's block counts to place a page that starts in it", async () => {
    // Prepare: a page of 10 that starts 10 to 19 items into the pending requests of group 1.
    const expected = seqsOf(['pending']);
    const page = Math.floor((expected.findIndex((seq) => groupOfSeq(seq) === 1) + 10) / 10) + 1;

    // Act
    const result = await pageOf(['pending'], page, 10);

    // Assess
    expect(result.items.map((item) => item.seq)).toEqual(expected.slice((page - 1) * 10, page * 10));
    expect(countQueries()).toContainEqual(
      expect.objectContaining({
        ExpressionAttributeValues: {
          ':pk': COUNTS_PK,
          ':from': blockSk('affiliate_requests#pending', 64),
          ':to': blockSk('affiliate_requests#pending', 127),
        },
      }),
    );
  });

  it('counts the newest group from its blocks, exact at once, whatever its group total says or whether it has one', async () => {
    // Prepare: the newest group's total is missing for pending and wrong for declined.
    groupOverrides.set('pending#3', null);
    groupOverrides.set('declined#3', 1);
    const expected = seqsOf(['pending', 'declined']);

    // Act
    const first = await pageOf(['pending', 'declined'], 1, 50);
    const last = await pageOf(['pending', 'declined'], Math.ceil(expected.length / 50), 50);

    // Assess
    expect([first.total, last.total]).toEqual([expected.length, expected.length]);
    expect(first.items.map((item) => item.seq)).toEqual(expected.slice(0, 50));
    expect(last.items.map((item) => item.seq)).toEqual(expected.slice(50 * (Math.ceil(expected.length / 50) - 1)));
  });

  it('counts a newest group whose 64 blocks all hold items from its blocks too (the newest read holds them all)', async () => {
    // Prepare: groups 0 and 1 only, every block of group 1 holding pending requests; group 1 has no total yet.
    stored = stored.filter((item) => item.seq < 2 * GROUP_SEQS);
    const expected = seqsOf(['pending']);
    expect(new Set(expected.filter((seq) => groupOfSeq(seq) === 1).map((seq) => Math.floor(seq / 256))).size).toBe(64);
    groupOverrides.set('pending#1', null);

    // Act
    const last = await pageOf(['pending'], Math.ceil(expected.length / 10), 10);

    // Assess
    expect(last.total).toBe(expected.length);
    expect(last.items.map((item) => item.seq)).toEqual(expected.slice(10 * (Math.ceil(expected.length / 10) - 1)));
  });

  it('pages a list of fewer than 64 blocks exactly without any group total', async () => {
    // Prepare: the first 10,000 sequence numbers only (40 blocks), no group total written yet.
    stored = stored.filter((item) => item.seq <= 10_000);
    for (const status of STATUSES) groupOverrides.set(`${status}#0`, null);
    const expected = seqsOf(['accepted', 'pending']);

    // Act
    const read = [];
    for (let page = 1; page <= Math.ceil(expected.length / 20); page++) read.push(await pageOf(['accepted', 'pending'], page, 20));

    // Assess
    expect(read.every((result) => result.total === expected.length)).toBe(true);
    expect(read.flatMap((result) => result.items.map((item) => item.seq))).toEqual(expected);
  });

  it('reads on into the next group when a stale older total promised more items than its blocks hold', async () => {
    // Prepare: group 1's total of pending requests is 3 too high; a page starting in those 3.
    const expected = seqsOf(['pending']);
    const throughGroup1 = expected.filter((seq) => groupOfSeq(seq) >= 1).length;
    groupOverrides.set('pending#1', expected.filter((seq) => groupOfSeq(seq) === 1).length + 3);

    // Act
    const result = await pageOf(['pending'], throughGroup1 + 2, 1);

    // Assess: the offset lies one item past group 1's last real one: group 0's second newest.
    expect(result.total).toBe(expected.length + 3);
    expect(result.items.map((item) => item.seq)).toEqual([expected[throughGroup1 + 1]]);
  });
});
