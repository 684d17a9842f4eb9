import { functionTable } from '#shared/db/client';
import { affiliateList, getAffiliate as readAffiliate } from '#shared/db/entities/affiliate';
import { getTier as readTier } from '#shared/db/entities/tier';
import { readPage } from '#shared/db/pages';
import { orNotFound } from '#shared/errors';
import type { PageQuery } from '#shared/page-window';
import { toAffiliateResponse } from './program-model';
import { tiersBySlug } from './tiers';

/** One page of the merchant's affiliates, newest first, optionally of one tier, and one Query for the tier names. */
export const listAffiliates = async (
  merchantId: string,
  query: PageQuery & { tier_slug?: string | null },
): Promise<{ total: number; affiliates: ReturnType<typeof toAffiliateResponse>[] }> => {
  const { total, items } = await readPage(functionTable, affiliateList(merchantId, query.tier_slug || null), query);
  const tiers = items.some((affiliate) => affiliate.tier_slug) ? await tiersBySlug(merchantId) : new Map();
  return {
    total,
    affiliates: items.map((affiliate) => toAffiliateResponse(affiliate, affiliate.tier_slug ? tiers.get(affiliate.tier_slug) : undefined)),
  };
};

/** One affiliate with its tier: two GetItems (the second only when it has a tier). Missing or foreign: 404. */
export const getAffiliate = async (merchantId: string, slug: string) => {
  const affiliate = await orNotFound(readAffiliate(functionTable, merchantId, slug));
  const tier = affiliate.tier_slug ? await readTier(functionTable, merchantId, affiliate.tier_slug) : undefined;
  return toAffiliateResponse(affiliate, tier);
};
