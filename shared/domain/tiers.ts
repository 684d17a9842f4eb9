import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, functionTable, TABLE_NAME } from '../db/client';
import { keys, SK } from '../db/keys';
import { notFound } from '../http/errors';
import type { PageQuery } from '../http/pagination';
import { slicePage } from '../http/pagination';
import { byTierName, type TierItem } from './program-model';
import { queryPrefix } from './program-store';

/** All of a merchant's tiers, by name. One Query on the merchant partition (TIER# prefix). */
export const allTiers = async (merchantId: string): Promise<TierItem[]> =>
  (await queryPrefix<TierItem>(functionTable, merchantId, SK.tier)).sort(byTierName);

/** Tiers by slug, for showing an affiliate's or a segment's tier names. */
export const tiersBySlug = async (merchantId: string): Promise<Map<string, TierItem>> =>
  new Map((await allTiers(merchantId)).map((tier) => [tier.slug, tier]));

/** One page of tiers, by name; the whole list is one Query (see queryPrefix). */
export const listTiers = async (merchantId: string, query: PageQuery): Promise<{ total: number; tiers: TierItem[] }> => {
  const tiers = await allTiers(merchantId);
  return { total: tiers.length, tiers: slicePage(tiers, query) };
};

/** One GetItem. Slugs are stored lowercase, so any casing finds the tier. Missing or foreign: 404. */
export const findTier = async (merchantId: string, slug: string): Promise<TierItem | undefined> => {
  const { Item } = await ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: keys.tier(merchantId, slug.toLowerCase()) }));
  return Item as TierItem | undefined;
};

export const getTier = async (merchantId: string, slug: string): Promise<TierItem> => {
  const tier = await findTier(merchantId, slug);
  if (!tier) throw notFound();
  return tier;
};
