import { functionTable } from '#shared/db/client';
import { allTiers as readAllTiers, getTier as readTier, type TierItem } from '#shared/db/entities/tier';
import { orNotFound } from '#shared/errors';
import { type PageQuery, slicePage } from '#shared/page-window';
import { byTierName } from './program-model';

/** All of a merchant's tiers, by name: one Query, at most MAX_TIERS items. */
export const allTiers = async (merchantId: string): Promise<TierItem[]> => (await readAllTiers(functionTable, merchantId)).sort(byTierName);

/** Tiers by slug, for showing an affiliate's or a segment's tier names. */
export const tiersBySlug = async (merchantId: string): Promise<Map<string, TierItem>> =>
  new Map((await allTiers(merchantId)).map((tier) => [tier.slug, tier]));

/** One page of tiers, by name; the whole (capped) list is one Query. */
export const listTiers = async (merchantId: string, query: PageQuery): Promise<{ total: number; tiers: TierItem[] }> => {
  const tiers = await allTiers(merchantId);
  return { total: tiers.length, tiers: slicePage(tiers, query) };
};

/** One GetItem (slugs are stored lowercase, so any casing finds the tier). Missing or foreign: 404. */
export const getTier = (merchantId: string, slug: string): Promise<TierItem> => orNotFound(readTier(functionTable, merchantId, slug));
