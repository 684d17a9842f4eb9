import * as z from 'zod/mini';
import { isoNow } from '#shared/time';
import { storedItem } from './base';

/** A commission tier: `TIER#<slug>` (lowercase). At most MAX_TIERS per merchant, so the list is a bounded read. */
export const MAX_TIERS = 100;

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

export const { key: tierKey, get: getTier, all: allTiers } = storedItem('tier', tierSchema, 'TIER#', (slug) => slug.toLowerCase());
