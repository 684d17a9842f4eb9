/**
 * The constant-cost page read (shared/db/pages.ts) against a table that behaves like DynamoDB:
 * block counts per (list, bucket, 256 sequence numbers), and index partitions answering a
 * key-range Query highest first, at most Limit items and at most 100 per response (as if 1 MB
 * were reached), continued with ExclusiveStartKey. Every page of every status combination is
 * compared with the list sorted in memory, across several blocks and with unused sequence numbers.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { functionTable } from '#shared/db/client';
import { type AffiliateRequestStatus, affiliateRequestList, affiliateRequestRecord } from '#shared/db/entities/affiliate-request';
import { readPage } from '#shared/db/pages';
import { ddbMock, resetAwsMocks } from './support/aws';

const MERCHANT_ID = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';
const COUNTS_PK = `M#${MERCHANT_ID}#COUNTS`;
const STATUSES: AffiliateRequestStatus[] = ['pending', 'accepted', 'declined'];

type Stored = ReturnType<typeof affiliateRequestRecord>;

/** 700 sequence numbers over three blocks; every 11th was never used (a create that lost its race). */
const population = (): Stored[] =>
  Array.from({ length: 700 }, (_, index) => index + 1)
    .filter((seq) => seq % 11 !== 0)
    .map((seq) =>
      affiliateRequestRecord(
        MERCHANT_ID,
        {
          seq,
          status: STATUSES[(seq + Math.floor(seq / 13)) % 3] as AffiliateRequestStatus,
          affiliate: { slug: `a${seq}`, name: `A ${seq}`, email: `a${seq}@x.example` },
        },
        '2026-03-01T00:00:00.000Z',
      ),
    );

let stored: Stored[] = [];
const indexQueries = () => ddbMock.commandCalls(QueryCommand, { IndexName: 'gsi1' });

beforeEach(() => {
  resetAwsMocks();
  stored = population();
  ddbMock.on(QueryCommand, { ExpressionAttributeValues: { ':pk': COUNTS_PK } }).callsFake(async (input: QueryCommandInput) => {
    const from = String(input.ExpressionAttributeValues?.[':from']);
    const to = String(input.ExpressionAttributeValues?.[':to']);
    const blocks = new Map<string, number>();
    for (const item of stored) {
      const sk = `affiliate_requests#${item.status}#${String(Math.floor(item.seq / 256)).padStart(8, '0')}`;
      if (sk >= from && sk <= to) blocks.set(sk, (blocks.get(sk) ?? 0) + 1);
    }
    return { Items: [...blocks].sort().map(([sk, n]) => ({ sk, n })) };
  });
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

describe('readPage over block counts', () => {
  it.each([
    [['pending']],
    [['declined']],
    [['pending', 'declined']],
    [['accepted', 'pending', 'declined']],
  ] as AffiliateRequestStatus[][][])(
    'gives every page of the statuses %j exactly, newest first, with the exact total',
    async (statuses) => {
      // Prepare
      const expected = stored
        .filter((item) => statuses.includes(item.status))
        .map((item) => item.seq)
        .sort((a, b) => b - a);
      expect(new Set(expected.map((seq) => Math.floor(seq / 256)))).toEqual(new Set([0, 1, 2]));
      const perPage = 17;
      const pages = Math.ceil(expected.length / perPage);

      // Act
      const read = [];
      for (let page = 1; page <= pages + 1; page++)
        read.push(await readPage(functionTable, affiliateRequestList(MERCHANT_ID, statuses), { page, per_page: perPage }));

      // Assess
      expect(read.map((result) => result.total)).toEqual(Array<number>(pages + 1).fill(expected.length));
      expect(
        read
          .slice(0, -1)
          .every((result, index) => result.items.length === (index < pages - 1 ? perPage : expected.length - perPage * (pages - 1))),
      ).toBe(true);
      expect(read.at(-1)?.items).toEqual([]);
      expect(read.flatMap((result) => result.items.map((item) => item.seq))).toEqual(expected);
    },
  );

  it('reads any page with one count Query per status and one index Query per status (plus continuations past 1 MB)', async () => {
    // Act
    await readPage(functionTable, affiliateRequestList(MERCHANT_ID, ['pending', 'declined']), { page: 20, per_page: 15 });

    // Assess
    expect(ddbMock.commandCalls(QueryCommand, { ExpressionAttributeValues: { ':pk': COUNTS_PK } })).toHaveLength(2);
    const partitions = indexQueries().map((call) => call.args[0].input.ExpressionAttributeValues?.[':pk']);
    expect(new Set(partitions)).toEqual(
      new Set([`M#${MERCHANT_ID}#affiliate_requests#pending`, `M#${MERCHANT_ID}#affiliate_requests#declined`]),
    );
    // Each Query reads at most 255 items before the page plus the page itself.
    for (const call of indexQueries()) expect(call.args[0].input.Limit).toBeLessThanOrEqual(255 + 15);
  });
});
