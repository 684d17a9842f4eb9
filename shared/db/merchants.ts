import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { TokenKind } from '../config';
import { ddb, TABLE_NAME } from './client';
import { keys } from './keys';
import { tokenLookupQuery, type TokenRecord } from './tokens';

export type Merchant = { id: string; name: string; currency: string };

export type Credential = {
  merchant: Merchant;
  token: { hash: string; kind: TokenKind; canPlaceLiveOrders: boolean };
};

/**
 * Resolves a token hash to its merchant: one Query on gsi1 and one GetItem.
 * Returns undefined for an unknown or revoked token.
 */
export const findCredential = async (tokenHash: string): Promise<Credential | undefined> => {
  const { Items } = await ddb.send(new QueryCommand(tokenLookupQuery(TABLE_NAME, tokenHash)));
  const token = Items?.[0] as TokenRecord | undefined;
  if (!token || token.revoked_at) return undefined;
  const merchant = await getMerchant(token.merchant_id);
  if (!merchant) return undefined;
  return {
    merchant,
    token: { hash: tokenHash, kind: token.kind, canPlaceLiveOrders: token.can_place_live_orders !== false },
  };
};

export const getMerchant = async (merchantId: string): Promise<Merchant | undefined> => {
  const { Item } = await ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: keys.merchant(merchantId) }));
  if (!Item) return undefined;
  return { id: merchantId, name: Item.name as string, currency: Item.currency as string };
};
