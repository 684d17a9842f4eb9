import * as z from 'zod/mini';
import { queryItems } from '#shared/db/query';
import { GSI1, type TableRef } from '#shared/db/table-def';
import { isoNow } from '#shared/time';
import type { TokenKind } from '#shared/tokens';
import { generateToken, hashToken } from '#shared/tokens';
import { itemKey, type Key, parseStoredOptional, updateItem } from './base';

/** An API token: `TOKEN#<sha-256 of the token>` in its merchant's partition, found by its hash on gsi1. */
export const tokenKey = (merchantId: string, tokenHash: string): Key => itemKey(merchantId, `TOKEN#${tokenHash}`);
const lookupEntry = (tokenHash: string) => ({ [GSI1.partitionKey]: `TOKEN#${tokenHash}`, [GSI1.sortKey]: 'TOKEN' });

const tokenSchema = z.object({
  merchant_id: z.string(),
  kind: z.enum(['live', 'testing']),
  can_place_live_orders: z.optional(z.boolean()),
  revoked_at: z.optional(z.string()),
  created_at: z.string(),
  label: z.optional(z.string()),
});

/** A new token's item; returns the token string too (the only time it exists in clear). */
export const tokenRecord = (
  merchantId: string,
  token: { kind: TokenKind; can_place_live_orders?: boolean; value?: string; label?: string },
) => {
  const value = token.value ?? generateToken(token.kind);
  const hash = hashToken(value);
  return {
    value,
    item: {
      ...tokenKey(merchantId, hash),
      ...lookupEntry(hash),
      type: 'token',
      merchant_id: merchantId,
      kind: token.kind,
      can_place_live_orders: token.can_place_live_orders ?? true,
      label: token.label,
      created_at: isoNow(),
    },
  };
};

/** The token item of a hash, or undefined. One Query on gsi1. */
export const findToken = async (db: TableRef, tokenHash: string) => {
  const lookup = lookupEntry(tokenHash);
  const query = {
    IndexName: GSI1.indexName,
    KeyConditionExpression: `${GSI1.partitionKey} = :pk AND ${GSI1.sortKey} = :sk`,
    ExpressionAttributeValues: { ':pk': lookup[GSI1.partitionKey], ':sk': lookup[GSI1.sortKey] },
  };
  const [item] = await queryItems(db, query, 1);
  return parseStoredOptional('token', tokenSchema, item);
};

/** Marks a token revoked; revoking twice keeps the first revoked_at. Returns revoked_at. */
export const revokeTokenRecord = async (db: TableRef, merchantId: string, tokenHash: string): Promise<string> => {
  const { Attributes } = await updateItem(db, {
    Key: tokenKey(merchantId, tokenHash),
    UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':now': isoNow() },
    ReturnValues: 'ALL_NEW',
  });
  return z.parse(z.object({ revoked_at: z.string() }), Attributes).revoked_at;
};
