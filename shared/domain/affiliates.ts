import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, functionTable, TABLE_NAME } from '../db/client';
import { keys, SK } from '../db/keys';
import { notFound } from '../http/errors';
import { slicePage, type PageQuery } from '../http/pagination';
import { newestFirst, toAffiliateResponse, type AffiliateItem } from './program-model';
import { queryPrefix } from './program-store';
import { findTier, tiersBySlug } from './tiers';

export { toAffiliateResponse } from './program-model';

/** Newest affiliate first (created_at), then by slug. */
export const affiliateOrder = newestFirst<AffiliateItem>((affiliate) => affiliate.created_at, (affiliate) => affiliate.slug);

/**
 * One page of the merchant's affiliates (every status), optionally only those of one tier.
 * One Query on the merchant partition (AFFILIATE# prefix, tier filtered server-side) and, when the
 * page shows any tier, one Query for the tier names; both lists are small and read whole.
 */
export const listAffiliates = async (
  merchantId: string,
  query: PageQuery & { tier_slug?: string | null },
): Promise<{ total: number; affiliates: ReturnType<typeof toAffiliateResponse>[] }> => {
  const filter = query.tier_slug
    ? { expression: 'tier_slug = :tier', values: { ':tier': query.tier_slug.toLowerCase() } }
    : undefined;
  const affiliates = (await queryPrefix<AffiliateItem>(functionTable, merchantId, SK.affiliate, filter)).sort(affiliateOrder);
  const page = slicePage(affiliates, query);
  const tiers = page.some((affiliate) => affiliate.tier_slug) ? await tiersBySlug(merchantId) : new Map();
  return {
    total: affiliates.length,
    affiliates: page.map((affiliate) => toAffiliateResponse(affiliate, affiliate.tier_slug ? tiers.get(affiliate.tier_slug) : undefined)),
  };
};

/** The affiliate item of a slug (any casing), or undefined. One GetItem. */
export const findAffiliate = async (merchantId: string, slug: string, consistent = false): Promise<AffiliateItem | undefined> => {
  const { Item } = await ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: keys.affiliate(merchantId, slug), ConsistentRead: consistent }));
  return Item as AffiliateItem | undefined;
};

/** One affiliate with its tier: two GetItems (the second only when it has a tier). Missing or foreign: 404. */
export const getAffiliate = async (merchantId: string, slug: string) => {
  const affiliate = await findAffiliate(merchantId, slug);
  if (!affiliate) throw notFound();
  const tier = affiliate.tier_slug ? await findTier(merchantId, affiliate.tier_slug) : undefined;
  return toAffiliateResponse(affiliate, tier);
};
