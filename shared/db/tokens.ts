import { createHash, randomBytes } from 'node:crypto';
import type { TokenKind } from '../config';
import { indexKeys } from './keys';
import { GSI1 } from './table-def';

/**
 * Token strings say their kind in a prefix (`live_` / `test_`) followed by 40 random URL-safe
 * characters. Only the SHA-256 hash is stored.
 */
export const TOKEN_PREFIX: Record<TokenKind, string> = { live: 'live_', testing: 'test_' };

export const kindOfToken = (token: string): TokenKind | undefined =>
  token.startsWith(TOKEN_PREFIX.live) ? 'live' : token.startsWith(TOKEN_PREFIX.testing) ? 'testing' : undefined;

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export const generateToken = (kind: TokenKind): string => `${TOKEN_PREFIX[kind]}${randomBytes(30).toString('base64url')}`;

export type TokenRecord = {
  merchant_id: string;
  kind: TokenKind;
  can_place_live_orders: boolean;
  revoked_at?: string;
  created_at: string;
  label?: string;
};

/** The Query that finds a token item by its hash on gsi1 (auth and the admin CLI). */
export const tokenLookupQuery = (tableName: string, tokenHash: string) => {
  const lookup = indexKeys.tokenLookup(tokenHash);
  return {
    TableName: tableName,
    IndexName: GSI1.indexName,
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
    ExpressionAttributeValues: { ':pk': lookup.gsi1pk, ':sk': lookup.gsi1sk },
    Limit: 1,
  };
};
