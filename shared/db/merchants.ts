import type { TokenKind } from '#shared/tokens';
import { functionTable } from './client';
import { getMerchant, type Merchant } from './entities/merchant';
import { findToken } from './entities/token';

export type { Merchant } from './entities/merchant';

export type Credential = {
  merchant: Merchant;
  token: { hash: string; kind: TokenKind; canPlaceLiveOrders: boolean };
};

/** Resolves a token hash to its merchant (one Query on gsi1, one GetItem); undefined for an unknown or revoked token. */
export const findCredential = async (tokenHash: string): Promise<Credential | undefined> => {
  const token = await findToken(functionTable, tokenHash);
  if (!token || token.revoked_at) return undefined;
  const merchant = await getMerchant(functionTable, token.merchant_id);
  if (!merchant) return undefined;
  return {
    merchant,
    token: { hash: tokenHash, kind: token.kind, canPlaceLiveOrders: token.can_place_live_orders !== false },
  };
};
