import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import { leaseTokens, type QuotaPolicy, tokenInterval } from '#shared/quota/gcra';
import { getStored, type Key, merchantPk, parseStoredOptional, refusedItem } from './base';

/**
 * A merchant's request quota on this stage: one item in a partition of its own,
 * `M#<merchant>#QUOTA`, so that every route may write it (IAM `dynamodb:LeadingKeys` matches that
 * partition only) without being allowed any other write. It holds the bucket's state (`tat_us`, see
 * shared/quota/gcra.ts; an older `tat` in milliseconds is ignored) and the override ops set (`rate`, `burst`; absent: the stage's default).
 */
export const QUOTA_PARTITION_SUFFIX = '#QUOTA';
/** The IAM pattern of the quota partitions (every route's only write outside its own access). */
export const QUOTA_LEADING_KEYS = `M#*${QUOTA_PARTITION_SUFFIX}`;
export const quotaKey = (merchantId: string): Key => ({ pk: `${merchantPk(merchantId)}${QUOTA_PARTITION_SUFFIX}`, sk: 'QUOTA' });

const quotaSchema = z.looseObject({
  tat_us: z.optional(z.number()),
  rate: z.optional(z.number()),
  burst: z.optional(z.number()),
});
export type QuotaItem = z.output<typeof quotaSchema>;

export const policyOf = (item: QuotaItem | undefined, fallback: QuotaPolicy): QuotaPolicy =>
  item?.rate !== undefined && item.burst !== undefined ? { rate: item.rate, burst: item.burst } : fallback;

/** Tokens taken and the item as it now stands (`item`: what the next take starts from). */
export type QuotaTake = (
  | { granted: number; end: number; policy: QuotaPolicy; item: QuotaItem }
  | { granted: 0; retryAfterUs: number; policy: QuotaPolicy; item: QuotaItem }
) & {
  /** The instant it was decided on. */
  at: number;
  /** The bucket was in use (its `tat_us` ahead of that instant): the best guess for the next take. */
  inUse: boolean;
};

export type TakeRequest = {
  /** Microseconds; read when the take starts, and again only if it would refuse on a bucket it had to read again. */
  clock: () => number;
  /** Tokens to take (fewer when fewer are left). */
  want: number;
  fallback: QuotaPolicy;
  /** The item as this container last saw it (none at first). */
  seen?: QuotaItem;
  /** Whether the bucket was in use at this container's last take: which write to try first when `seen` is old. */
  inUse?: boolean;
};

/** Conditional writes one take may lose before it refuses (each loss answers the item as it stands). */
export const MAX_TAKE_ATTEMPTS = 8;

/**
 * Takes up to `want` tokens of the merchant's bucket at the take's instant (microseconds) in one
 * conditional UpdateItem, decided on the item as it stands, never on a guess: `SET tat_us = now +
 * tokens` on a full bucket, `SET tat_us = tat_us + tokens` on one in use, and the answer (`end`)
 * says where the tokens end. `seen` and `inUse` pick the first write; a refused write is decided
 * again on the item it returns. After MAX_TAKE_ATTEMPTS losses it throws QuotaContention, which
 * the limiter answers with a refusal. The conditions, and why, are in docs/design-notes.md#quotas.
 */
export const takeQuota = async ({ ddb, table }: TableRef, merchantId: string, request: TakeRequest): Promise<QuotaTake> => {
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
    const quotaCondition = own ? '#rate = :rate AND #burst = :burst' : 'attribute_not_exists(#rate)';
    try {
      const { Attributes } = await ddb.send(
        new UpdateCommand({
          TableName: table,
          Key: quotaKey(merchantId),
          ...(adds
            ? {
                UpdateExpression: 'SET #tat = #tat + :add',
                ConditionExpression: `#tat BETWEEN :now AND :last AND ${quotaCondition}`,
              }
            : {
                UpdateExpression: 'SET #tat = :end',
                ConditionExpression: `(attribute_not_exists(#tat) OR #tat < :now) AND ${quotaCondition}`,
              }),
          ExpressionAttributeNames: { '#tat': 'tat_us', '#rate': 'rate', ...(own ? { '#burst': 'burst' } : {}) },
          ExpressionAttributeValues: {
            ':now': now,
            ...(adds
              ? { ':add': lease.granted * step, ':last': now + (policy.burst - lease.granted) * step }
              : { ':end': now + lease.granted * step }),
            ...(own ? { ':rate': policy.rate, ':burst': policy.burst } : {}),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const stored = parseStoredOptional('quota', quotaSchema, Attributes) ?? {};
      const end = stored.tat_us ?? now + lease.granted * step;
      return { granted: lease.granted, end, policy: policyOf(stored, request.fallback), item: stored, at: now, inUse: adds };
    } catch (error) {
      // None: no item yet.
      item = parseStoredOptional('quota', quotaSchema, refusedItem(error)) ?? {};
      fresh = true;
    }
  }
  throw new QuotaContention(`quota of merchant ${merchantId} kept moving under its take`);
};

export class QuotaContention extends Error {
  override name = 'QuotaContention';
}

export const getQuota = (db: TableRef, merchantId: string): Promise<QuotaItem | undefined> =>
  getStored(db, 'quota', quotaSchema, quotaKey(merchantId), true);

/** Sets the merchant's own quota (ops, `npm run admin -- quota`), or removes it (`undefined`: the stage's default again). */
export const setQuotaOverride = ({ ddb, table }: TableRef, merchantId: string, policy: QuotaPolicy | undefined) =>
  ddb.send(
    new UpdateCommand({
      TableName: table,
      Key: quotaKey(merchantId),
      ...(policy
        ? {
            UpdateExpression: 'SET rate = :rate, burst = :burst',
            ExpressionAttributeValues: { ':rate': policy.rate, ':burst': policy.burst },
          }
        : { UpdateExpression: 'REMOVE rate, burst' }),
    }),
  );
