import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import { isoNow } from '#shared/time';
import { getStored, itemKey, type Key, putNew } from './base';

/** The merchant account: `MERCHANT` in its own partition. */
export const merchantKey = (merchantId: string): Key => itemKey(merchantId, 'MERCHANT');

const merchantSchema = z.object({
  name: z.string(),
  currency: z.string(),
  /** The tier an affiliate gets when it joins without one (acceptance of a request). */
  default_tier: z.optional(z.string()),
});

export type Merchant = { id: string; name: string; currency: string; defaultTier: string | null };

export const getMerchant = async (db: TableRef, merchantId: string, consistent = false): Promise<Merchant | undefined> => {
  const stored = await getStored(db, 'merchant', merchantSchema, merchantKey(merchantId), consistent);
  return stored && { id: merchantId, name: stored.name, currency: stored.currency, defaultTier: stored.default_tier ?? null };
};

/** Creates the merchant; refuses (ConditionalCheckFailedException) an id that exists. */
export const putNewMerchant = (db: TableRef, merchant: { id: string; name: string; currency: string; defaultTier: string }) =>
  putNew(db, {
    ...merchantKey(merchant.id),
    type: 'merchant',
    id: merchant.id,
    name: merchant.name,
    currency: merchant.currency.toUpperCase(),
    default_tier: merchant.defaultTier,
    created_at: isoNow(),
  });
