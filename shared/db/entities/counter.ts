import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { queryItems } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { itemKey, merchantPk, parseStored } from './base';

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
export type ListName = 'orders' | 'affiliates' | 'affiliate_requests' | 'invites';

export const BLOCK_SIZE = 256;

const sequenceKey = (merchantId: string, list: ListName) => itemKey(merchantId, `COUNTER#${list}`);

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

const countsPartition = (merchantId: string) => `${merchantPk(merchantId)}#COUNTS`;
/** Bucket names come from data (tier slugs): encoded so that one can never prefix another. */
const bucketPrefix = (list: ListName, bucket: string) => `${list}#${encodeURIComponent(bucket)}#`;
export const blockOf = (seq: number) => Math.floor(seq / BLOCK_SIZE);

export type CountChange = { list: ListName; bucket: string; seq: number; delta: number };

/**
 * Applies count changes, summed per block: one UpdateItem (ADD) per block touched. Called after
 * the write that made the change committed; safe to run concurrently with any other request.
 */
export const applyCountChanges = async ({ ddb, table }: TableRef, merchantId: string, changes: readonly CountChange[]): Promise<void> => {
  const sums = new Map<string, number>();
  for (const change of changes) {
    const sk = `${bucketPrefix(change.list, change.bucket)}${String(blockOf(change.seq)).padStart(8, '0')}`;
    sums.set(sk, (sums.get(sk) ?? 0) + change.delta);
  }
  await Promise.all(
    [...sums]
      .filter(([, delta]) => delta !== 0)
      .map(([sk, delta]) =>
        ddb.send(
          new UpdateCommand({
            TableName: table,
            Key: { pk: countsPartition(merchantId), sk },
            UpdateExpression: 'ADD n :delta SET #type = :type',
            ExpressionAttributeNames: { '#type': 'type' },
            ExpressionAttributeValues: { ':delta': delta, ':type': 'list_count' },
          }),
        ),
      ),
  );
};

const countItem = z.object({ sk: z.string(), n: z.number() });

/**
 * The block counts of one bucket: block number -> items. One Query (continued past 1 MB, which
 * takes about 30,000 blocks, i.e. 7.5 million items); size / BLOCK_SIZE small items at most.
 */
export const readBlockCounts = async (db: TableRef, merchantId: string, list: ListName, bucket: string): Promise<Map<number, number>> => {
  const prefix = bucketPrefix(list, bucket);
  const items = await queryItems(db, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': countsPartition(merchantId), ':prefix': prefix },
    ProjectionExpression: 'sk, n',
  });
  const counts = new Map<number, number>();
  for (const raw of items) {
    const { sk, n } = parseStored('list count', countItem, raw);
    if (n > 0) counts.set(Number(sk.slice(prefix.length)), n);
  }
  return counts;
};
