/**
 * A merchant's `#COUNTS` partition as DynamoDB answers a key-range Query on it: items whose sort
 * key lies BETWEEN :from AND :to, in key order or (ScanIndexForward false) reversed, at most Limit
 * of them and at most `pageSize` per response (as if 1 MB were reached), continued from
 * ExclusiveStartKey. Block counts are spelled `<list>#<bucket>#<8-digit block>`, group totals
 * `<list>#<bucket>#G#<8-digit group>`; spelled out here, not imported: the tests check the layout.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { ddbMock } from './aws';

/** A count item; an orders block that derives its count from the sequence holds only its `holes`. */
export type CountItem = { sk: string; n?: number; holes?: Set<number>; v?: number; vs?: number };

const pad = (value: number) => String(value).padStart(8, '0');
export const blockSk = (listBucket: string, block: number) => `${listBucket}#${pad(block)}`;
export const groupSk = (listBucket: string, group: number) => `${listBucket}#G#${pad(group)}`;

/** Block count items of one list bucket, from `block -> items`. */
export const blockItems = (listBucket: string, blocks: Record<number, number>): CountItem[] =>
  Object.entries(blocks).map(([block, n]) => ({ sk: blockSk(listBucket, Number(block)), n, v: 1 }));

/** Group total items (64 blocks each) of one list bucket, summed from `block -> items` as a refresh writes them. */
export const groupItems = (listBucket: string, blocks: Record<number, number>): CountItem[] => {
  const groups = new Map<number, number>();
  for (const [block, n] of Object.entries(blocks))
    groups.set(Math.floor(Number(block) / 64), (groups.get(Math.floor(Number(block) / 64)) ?? 0) + n);
  return [...groups].map(([group, n]) => ({ sk: groupSk(listBucket, group), n, vs: 1 }));
};

/** Answers every Query on partition `pk` from `items()` (read at each call, so a test may change them). */
export const stubCountsPartition = (pk: string, items: () => readonly CountItem[], pageSize = 100) => {
  ddbMock.on(QueryCommand, { ExpressionAttributeValues: { ':pk': pk } }).callsFake(async (input: QueryCommandInput) => {
    const values = input.ExpressionAttributeValues as Record<string, string>;
    const from = values[':from'] as string;
    const to = values[':to'] as string;
    const forward = input.ScanIndexForward !== false;
    const after = input.ExclusiveStartKey?.sk as string | undefined;
    const matching = items()
      .filter((item) => item.sk >= from && item.sk <= to)
      .sort((a, b) => (forward ? a.sk.localeCompare(b.sk) : b.sk.localeCompare(a.sk)))
      .filter((item) => after === undefined || (forward ? item.sk > after : item.sk < after));
    const page = matching.slice(0, Math.min(input.Limit ?? Number.POSITIVE_INFINITY, pageSize));
    const more = page.length < matching.length;
    return { Items: page, ...(more ? { LastEvaluatedKey: { pk, sk: page.at(-1)?.sk } } : {}) };
  });
};
