import * as z from 'zod/mini';
import { queryKey } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { leaseTokens, type QuotaPolicy, tokenInterval } from '#shared/quota/gcra';
import {
  getStored,
  type Key,
  merchantPk,
  parseStored,
  parseStoredOptional,
  updateApplied,
  updateIfAllowed,
  updateItem,
  updateOrRefused,
} from './base';

/** A merchant's quota item, in a partition every route may write, also holding the orders' sequence (docs/design-notes.md#quotas). */
export const QUOTA_PARTITION_SUFFIX = '#QUOTA';
/** The IAM pattern of the quota partitions (every route's only write outside its own access). */
export const QUOTA_LEADING_KEYS = `M#*${QUOTA_PARTITION_SUFFIX}`;
export const quotaKey = (merchantId: string): Key => ({ pk: `${merchantPk(merchantId)}${QUOTA_PARTITION_SUFFIX}`, sk: 'QUOTA' });

const quotaSchema = z.looseObject({
  tat_us: z.optional(z.number()),
  rate: z.optional(z.number()),
  burst: z.optional(z.number()),
  orders_seq: z.optional(z.number()),
  /** The first order sequence number whose block count is derived from the sequence (counter.ts), not kept by `ADD`. */
  orders_derived_from: z.optional(z.number()),
});
export type QuotaItem = z.output<typeof quotaSchema>;

export const policyOf = (item: QuotaItem | undefined, fallback: QuotaPolicy): QuotaPolicy =>
  item?.rate !== undefined && item.burst !== undefined ? { rate: item.rate, burst: item.burst } : fallback;

/** An order sequence number as taken, with where the sequence's derived block counts start (none: every block is counted by `ADD`). */
export type OrderNumber = { seq: number; derivedFrom?: number };

/** Tokens taken and the item as it now stands (`item`: what the next take starts from); `number`: the order sequence number taken with them. */
export type QuotaTake = (
  | { granted: number; end: number; policy: QuotaPolicy; item: QuotaItem; number?: OrderNumber }
  | { granted: 0; retryAfterUs: number; policy: QuotaPolicy; item: QuotaItem }
) & {
  at: number;
  /** The bucket was in use (its `tat_us` ahead of that instant): the best guess for the next take. */
  inUse: boolean;
};

export type TakeRequest = {
  /** Microseconds; read when the take starts, and again only if it would refuse on a bucket it had to read again. */
  clock: () => number;
  want: number;
  fallback: QuotaPolicy;
  /** The item as this container last saw it (none at first). */
  seen?: QuotaItem;
  /** Whether the bucket was in use at this container's last take: which write to try first when `seen` is old. */
  inUse?: boolean;
  /** Also take the next order sequence number, unless the item has no sequence yet (then the caller takes it apart). */
  sequence?: boolean;
};

/** Set by every write that takes order numbers, removed by every other take: the change feed's event source passes only the former. */
export const SEQUENCE_TAKEN = 'seq_taken';
const SEQUENCE_STARTED = 'attribute_exists(#seq)';
const sequenceUpdate = (withSeq: boolean) => (withSeq ? ', #taken = :taken ADD #seq :one' : ' REMOVE #taken');

/** Conditional writes one take may lose before it refuses (each loss answers the item as it stands). */
export const MAX_TAKE_ATTEMPTS = 8;

/** Takes up to `want` tokens in one conditional UpdateItem, decided again on a refusal's item (docs/design-notes.md#quotas). */
export const takeQuota = async (db: TableRef, merchantId: string, request: TakeRequest): Promise<QuotaTake> => {
  let item = request.seen ?? {};
  let fresh = false;
  let judgedAgain = false;
  let now = request.clock();
  for (let attempt = 0; attempt < MAX_TAKE_ATTEMPTS; attempt++) {
    const policy = policyOf(item, request.fallback);
    const own = item.rate !== undefined && item.burst !== undefined;
    const step = tokenInterval(policy);
    const tat = item.tat_us;
    let lease = leaseTokens(tat ?? 0, now, policy, request.want);
    if (!('tat' in lease) && fresh && !judgedAgain) {
      judgedAgain = true;
      now = Math.max(now, request.clock());
      lease = leaseTokens(tat ?? 0, now, policy, request.want);
    }
    const inUse = tat !== undefined && tat >= now;
    if (!('tat' in lease)) return { granted: 0, retryAfterUs: lease.retryAfterUs, policy, item, at: now, inUse };
    const adds = inUse || (!fresh && request.inUse === true);
    // Tried on a view (which may predate the sequence); not again once the item itself shows none.
    const withSeq = request.sequence === true && (item.orders_seq !== undefined || !fresh);
    const ownPolicy = own ? '#rate = :rate AND #burst = :burst' : 'attribute_not_exists(#rate)';
    const condition = withSeq ? `${ownPolicy} AND ${SEQUENCE_STARTED}` : ownPolicy;
    const result = await updateOrRefused(db, {
      Key: quotaKey(merchantId),
      ...(adds
        ? {
            UpdateExpression: `SET #tat = #tat + :add${sequenceUpdate(withSeq)}`,
            ConditionExpression: `#tat BETWEEN :now AND :last AND ${condition}`,
          }
        : {
            UpdateExpression: `SET #tat = :end${sequenceUpdate(withSeq)}`,
            ConditionExpression: `(attribute_not_exists(#tat) OR #tat < :now) AND ${condition}`,
          }),
      ExpressionAttributeNames: {
        '#tat': 'tat_us',
        '#rate': 'rate',
        '#taken': SEQUENCE_TAKEN,
        ...(own ? { '#burst': 'burst' } : {}),
        ...(withSeq ? { '#seq': 'orders_seq' } : {}),
      },
      ExpressionAttributeValues: {
        ':now': now,
        ...(adds
          ? { ':add': lease.granted * step, ':last': now + (policy.burst - lease.granted) * step }
          : { ':end': now + lease.granted * step }),
        ...(own ? { ':rate': policy.rate, ':burst': policy.burst } : {}),
        ...(withSeq ? { ':one': 1, ':taken': true } : {}),
      },
    });
    if ('refused' in result) {
      item = parseStoredOptional('quota', quotaSchema, result.refused) ?? {};
      fresh = true;
      continue;
    }
    const stored = parseStoredOptional('quota', quotaSchema, result.item) ?? {};
    const end = stored.tat_us ?? now + lease.granted * step;
    return {
      granted: lease.granted,
      end,
      policy: policyOf(stored, request.fallback),
      item: stored,
      at: now,
      inUse: adds,
      ...(withSeq && stored.orders_seq !== undefined ? { number: orderNumberOf(stored.orders_seq, stored) } : {}),
    };
  }
  throw new QuotaContention(`quota of merchant ${merchantId} kept moving under its take`);
};

export class QuotaContention extends Error {
  override name = 'QuotaContention';
}

/** The item has no `orders_seq` yet: the caller starts it from the orders' older counter (counter.ts). */
export class OrderSequenceNotStarted extends Error {
  override name = 'OrderSequenceNotStarted';
}

const orderNumberOf = (seq: number, { orders_derived_from }: QuotaItem): OrderNumber =>
  orders_derived_from === undefined ? { seq } : { seq, derivedFrom: orders_derived_from };

/** The last order number a quota item handed out; undefined before its sequence is started. */
export const orderNumberOfQuota = (item: QuotaItem | undefined): OrderNumber | undefined =>
  item?.orders_seq === undefined ? undefined : orderNumberOf(item.orders_seq, item);

/** Takes `count` consecutive order numbers, returns the first; refused before the sequence is started. `imported`: an import's take. */
export const takeOrderSequence = async (db: TableRef, merchantId: string, count = 1, imported = false): Promise<OrderNumber> => {
  const taken = await updateIfAllowed(db, {
    Key: quotaKey(merchantId),
    // An import's take is not marked: the change feed neither settles nor recounts its numbers.
    UpdateExpression: imported ? 'REMOVE #taken ADD #seq :count' : 'SET #taken = :taken ADD #seq :count',
    ConditionExpression: SEQUENCE_STARTED,
    ExpressionAttributeNames: { '#taken': SEQUENCE_TAKEN, '#seq': 'orders_seq' },
    ExpressionAttributeValues: { ':count': count, ...(imported ? {} : { ':taken': true }) },
  });
  if (taken === undefined) throw new OrderSequenceNotStarted(`order sequence of merchant ${merchantId} not started`);
  const stored = parseStored('quota', z.extend(quotaSchema, { orders_seq: z.number() }), taken);
  return orderNumberOf(stored.orders_seq - count + 1, stored);
};

/** Starts the order sequence after `last`, unless it was started already; blocks from the next number on derive their counts. */
export const startOrderSequence = (db: TableRef, merchantId: string, last: number) =>
  updateApplied(db, {
    Key: quotaKey(merchantId),
    UpdateExpression: 'SET #seq = :last, #from = :first',
    ConditionExpression: 'attribute_not_exists(#seq)',
    ExpressionAttributeNames: { '#seq': 'orders_seq', '#from': 'orders_derived_from' },
    ExpressionAttributeValues: { ':last': last, ':first': last + 1 },
  });

/** Derives the block counts from `first` on, unless they are derived already (a sequence started before derived counts). */
export const deriveOrderCountsFrom = (db: TableRef, merchantId: string, first: number) =>
  updateApplied(db, {
    Key: quotaKey(merchantId),
    UpdateExpression: 'SET #from = :first',
    ConditionExpression: 'attribute_exists(#seq) AND attribute_not_exists(#from)',
    ExpressionAttributeNames: { '#seq': 'orders_seq', '#from': 'orders_derived_from' },
    ExpressionAttributeValues: { ':first': first },
  });

/** The last order number handed out, read consistently by Query (the change feed may not GetItem); undefined before the sequence is started. */
export const readOrderSequence = async (db: TableRef, merchantId: string): Promise<OrderNumber | undefined> => {
  const raw = await queryKey(db, quotaKey(merchantId), { ProjectionExpression: 'orders_seq, orders_derived_from', ConsistentRead: true });
  return orderNumberOfQuota(parseStoredOptional('quota', quotaSchema, raw));
};

/** The order sequence numbers before and after a marked take on a quota item (stream images); undefined when it moved none. */
export const orderSequenceMove = (before: Record<string, unknown> | undefined, after: Record<string, unknown>) =>
  typeof after.pk === 'string' &&
  after.pk.endsWith(QUOTA_PARTITION_SUFFIX) &&
  after[SEQUENCE_TAKEN] === true &&
  typeof before?.orders_seq === 'number' &&
  typeof after.orders_seq === 'number' &&
  after.orders_seq > before.orders_seq
    ? { from: before.orders_seq, to: after.orders_seq }
    : undefined;

export const getQuota = (db: TableRef, merchantId: string) => getStored(db, 'quota', quotaSchema, quotaKey(merchantId), true);

/** Sets the merchant's own quota (ops, `npm run admin -- quota`), or removes it (`undefined`: the stage's default again). */
export const setQuotaOverride = (db: TableRef, merchantId: string, policy: QuotaPolicy | undefined) =>
  updateItem(db, {
    Key: quotaKey(merchantId),
    ...(policy
      ? {
          UpdateExpression: 'SET rate = :rate, burst = :burst',
          ExpressionAttributeValues: { ':rate': policy.rate, ':burst': policy.burst },
        }
      : { UpdateExpression: 'REMOVE rate, burst' }),
  });
