import * as z from 'zod/mini';
import { GSI1, GSI3, type ListIndex } from '#shared/db/table-def';
import { merchantPk, padSeq } from './base';

/** The sequenced lists: each has a sequence counter, block counts (counter.ts) and index entries (here). */
export const listName = z.enum(['orders', 'affiliates', 'affiliate_requests', 'invites']);
export type ListName = z.output<typeof listName>;

/** An item of list L in bucket B is indexed in partition `M#<merchant>#<L>#<B>` at its padded sequence number (gsi3 for a second listing). */
export const listPartition = (merchantId: string, list: ListName, bucket: string) =>
  `${merchantPk(merchantId)}#${list}#${encodeURIComponent(bucket)}`;

/** The bucket of a list that holds every item (orders, invites, affiliates of any tier). */
export const ALL_BUCKET = 'all';

export const listIndexOf = (list: ListName, bucket: string): ListIndex => (list === 'affiliates' && bucket !== ALL_BUCKET ? GSI3 : GSI1);

export const primaryListEntry = (merchantId: string, list: ListName, bucket: string, seq: number) => ({
  gsi1pk: listPartition(merchantId, list, bucket),
  gsi1sk: padSeq(seq),
});

export const secondaryListEntry = (merchantId: string, list: ListName, bucket: string, seq: number) => ({
  gsi3pk: listPartition(merchantId, list, bucket),
  gsi3sk: padSeq(seq),
});
