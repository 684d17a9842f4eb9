import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import { leaseTokens, type QuotaPolicy } from '#shared/quota/gcra';
import { type Key, merchantPk, parseStoredOptional } from './base';

/**
 * A merchant's request quota on this stage: one item in a partition of its own,
 * `M#<merchant>#QUOTA`, so that every route may write it (IAM `dynamodb:LeadingKeys` matches that
 * partition only) without being allowed any other write. It holds the bucket's state (`tat`, see
 * shared/quota/gcra.ts) and the override ops set (`rate`, `burst`; absent: the stage's default).
 */
export const QUOTA_PARTITION_SUFFIX = '#QUOTA';
/** The IAM pattern of the quota partitions (every route's only write outside its own access). */
export const QUOTA_LEADING_KEYS = `M#*${QUOTA_PARTITION_SUFFIX}`;
export const quotaKey = (merchantId: string): Key => ({ pk: `${merchantPk(merchantId)}${QUOTA_PARTITION_SUFFIX}`, sk: 'QUOTA' });

const quotaSchema = z.looseObject({
  tat: z.optional(z.number()),
  rate: z.optional(z.number()),
  burst: z.optional(z.number()),
});
export type QuotaItem = z.output<typeof quotaSchema>;

const policyOf = (item: QuotaItem | undefined, fallback: QuotaPolicy): QuotaPolicy =>
  item?.rate !== undefined && item.burst !== undefined ? { rate: item.rate, burst: item.burst } : fallback;

/** A lease and the item as it now stands (`item`: what the next lease is conditional on). */
export type QuotaLease =
  | { granted: number; tat: number; policy: QuotaPolicy; item: QuotaItem }
  | { granted: 0; retryAfterMs: number; tat: number; policy: QuotaPolicy; item: QuotaItem };

/**
 * Leases up to `wantOf(quota)` tokens of the merchant's bucket: one conditional UpdateItem on the state last
 * seen (`seen`: the item as this container last read it; none at first), which answers the new
 * state; when another container moved it meanwhile, the refusal carries the current item and the
 * lease is computed again (a few times at most). A refused lease writes nothing.
 */
export const leaseQuota = async (
  { ddb, table }: TableRef,
  merchantId: string,
  now: number,
  /** Tokens to lease, given the merchant's quota (a share of its rate). */
  wantOf: (policy: QuotaPolicy) => number,
  fallback: QuotaPolicy,
  seen?: QuotaItem,
): Promise<QuotaLease> => {
  let item = seen;
  for (let attempt = 0; attempt < 4; attempt++) {
    const policy = policyOf(item, fallback);
    const own = item?.rate !== undefined && item.burst !== undefined;
    const before = item?.tat;
    const lease = leaseTokens(before ?? 0, now, policy, wantOf(policy));
    if (!('tat' in lease)) return { granted: 0, retryAfterMs: lease.retryAfterMs, tat: before ?? 0, policy, item: item ?? {} };
    try {
      const { Attributes } = await ddb.send(
        new UpdateCommand({
          TableName: table,
          Key: quotaKey(merchantId),
          UpdateExpression: 'SET tat = :tat',
          // On the state and the quota as seen: a lease computed with a quota ops have changed since is computed again.
          ConditionExpression: [
            before === undefined ? 'attribute_not_exists(tat)' : 'tat = :before',
            own ? '#rate = :rate AND #burst = :burst' : 'attribute_not_exists(#rate)',
          ].join(' AND '),
          ExpressionAttributeNames: { '#rate': 'rate', ...(own ? { '#burst': 'burst' } : {}) },
          ExpressionAttributeValues: {
            ':tat': lease.tat,
            ...(before === undefined ? {} : { ':before': before }),
            ...(own ? { ':rate': policy.rate, ':burst': policy.burst } : {}),
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const stored = parseStoredOptional('quota', quotaSchema, Attributes) ?? { tat: lease.tat };
      return { granted: lease.granted, tat: lease.tat, policy: policyOf(stored, fallback), item: stored };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The document client does not unmarshall exceptions: the current item arrives in wire format.
      item = parseStoredOptional('quota', quotaSchema, error.Item ? unmarshall(error.Item) : {});
    }
  }
  throw new QuotaContention(`quota of merchant ${merchantId} kept moving under its lease`);
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
