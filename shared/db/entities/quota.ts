import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import { leaseTokens, type QuotaPolicy, tokenInterval } from '#shared/quota/gcra';
import { type Key, merchantPk, parseStoredOptional } from './base';

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
export type QuotaTake =
  | { granted: number; end: number; policy: QuotaPolicy; item: QuotaItem }
  | { granted: 0; retryAfterUs: number; policy: QuotaPolicy; item: QuotaItem };

/** Conditional writes one take may lose before it refuses (each loss answers the item as it stands). */
export const MAX_TAKE_ATTEMPTS = 8;

/**
 * Takes up to `want` tokens of the merchant's bucket at `now` (microseconds) in one conditional
 * UpdateItem, decided on the item as it stands, never on a guess:
 *
 * - bucket full (`tat_us` absent or past): `SET tat_us = now + tokens`, on `tat_us` still past;
 * - bucket in use: `SET tat_us = tat_us + tokens`, on `tat_us` between now and the last instant
 *   that leaves room for them. An addition, not a compare-and-set: containers taking at once do
 *   not conflict, each gets its own intervals, and the answer (`end`) says where they end.
 *
 * `seen` (the item as this container last saw it) picks the branch; when the condition fails, the
 * refusal carries the item as it stands and the take is decided again on it: another branch, fewer
 * tokens, or a refusal without a write when the bucket is empty. A refusal on `seen` alone is exact
 * too (`tat_us` only grows, so the bucket holds no more than seen). Each condition also holds the
 * quota as seen, so a take computed with a quota ops have changed since is computed again. After
 * MAX_TAKE_ATTEMPTS losses it throws QuotaContention, which the limiter answers with a refusal.
 */
export const takeQuota = async (
  { ddb, table }: TableRef,
  merchantId: string,
  now: number,
  want: number,
  fallback: QuotaPolicy,
  seen?: QuotaItem,
): Promise<QuotaTake> => {
  let item = seen ?? {};
  for (let attempt = 0; attempt < MAX_TAKE_ATTEMPTS; attempt++) {
    const policy = policyOf(item, fallback);
    const own = item.rate !== undefined && item.burst !== undefined;
    const step = tokenInterval(policy);
    const tat = item.tat_us;
    const lease = leaseTokens(tat ?? 0, now, policy, want);
    if (!('tat' in lease)) return { granted: 0, retryAfterUs: lease.retryAfterUs, policy, item };
    const full = tat === undefined || tat < now;
    const quotaCondition = own ? '#rate = :rate AND #burst = :burst' : 'attribute_not_exists(#rate)';
    try {
      const { Attributes } = await ddb.send(
        new UpdateCommand({
          TableName: table,
          Key: quotaKey(merchantId),
          ...(full
            ? {
                UpdateExpression: 'SET #tat = :end',
                ConditionExpression: `(attribute_not_exists(#tat) OR #tat < :now) AND ${quotaCondition}`,
              }
            : {
                UpdateExpression: 'SET #tat = #tat + :add',
                ConditionExpression: `#tat BETWEEN :now AND :last AND ${quotaCondition}`,
              }),
          ExpressionAttributeNames: { '#tat': 'tat_us', '#rate': 'rate', ...(own ? { '#burst': 'burst' } : {}) },
          ExpressionAttributeValues: {
            ':now': now,
            ...(full ? { ':end': lease.tat } : { ':add': lease.granted * step, ':last': now + (policy.burst - lease.granted) * step }),
            ...(own ? { ':rate': policy.rate, ':burst': policy.burst } : {}),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const stored = parseStoredOptional('quota', quotaSchema, Attributes) ?? { tat_us: lease.tat };
      return { granted: lease.granted, end: stored.tat_us ?? lease.tat, policy: policyOf(stored, fallback), item: stored };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The document client does not unmarshall exceptions: the current item arrives in wire format (none: no item yet).
      item = parseStoredOptional('quota', quotaSchema, error.Item ? unmarshall(error.Item) : undefined) ?? {};
    }
  }
  throw new QuotaContention(`quota of merchant ${merchantId} kept moving under its take`);
};

export class QuotaContention extends Error {
  override name = 'QuotaContention';
}

export const getQuota = async ({ ddb, table }: TableRef, merchantId: string): Promise<QuotaItem | undefined> => {
  const { Item } = await ddb.send(new GetCommand({ TableName: table, Key: quotaKey(merchantId), ConsistentRead: true }));
  return parseStoredOptional('quota', quotaSchema, Item);
};

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
