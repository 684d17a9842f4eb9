import * as z from 'zod/mini';
import { queryKeyPrefix } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { isoNow } from '#shared/time';
import { itemKey, type Key, merchantPk, storedItem } from './base';

/** A commission tier: `TIER#<slug>` (lowercase). At most MAX_TIERS per merchant, so the list is a bounded read. */
const SK_PREFIX = 'TIER#';
export const MAX_TIERS = 100;
export const tierKey = (merchantId: string, slug: string): Key => itemKey(merchantId, `${SK_PREFIX}${slug.toLowerCase()}`);

const tierSchema = z.object({
  slug: z.string(),
  name: z.string(),
  description: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type TierItem = z.output<typeof tierSchema>;

export const tierRecord = (merchantId: string, tier: { slug: string; name: string; description?: string | null }, now = isoNow()) => ({
  ...tierKey(merchantId, tier.slug),
  type: 'tier',
  slug: tier.slug.toLowerCase(),
  name: tier.name,
  description: tier.description ?? '',
  created_at: now,
  updated_at: now,
});

const tier = storedItem('tier', tierSchema, tierKey);
export const getTier = tier.get;

/** Every tier of the merchant (at most MAX_TIERS): one Query. */
export const allTiers = async (db: TableRef, merchantId: string): Promise<TierItem[]> =>
  (await queryKeyPrefix(db, merchantPk(merchantId), SK_PREFIX)).map(tier.parse);
