import * as z from 'zod/mini';
import type { ListSpec } from '#shared/db/pages';
import { isoNow } from '#shared/time';
import { nullableString, storedItem } from './base';
import { type CountChange, countChange } from './counter';
import { ALL_BUCKET, primaryListEntry, secondaryListEntry } from './list-entry';

const affiliateSchema = z.looseObject({
  slug: z.string(),
  seq: z.number(),
  name: z.string(),
  email: z.string(),
  status: z.enum(['active', 'inactive']),
  tier_slug: nullableString(),
  accepted_at: nullableString(),
  created_at: z.string(),
  updated_at: z.string(),
});

export type AffiliateItem = z.output<typeof affiliateSchema>;

/** An affiliate of the merchant: `AFFILIATE#<slug>` (lowercase), listed in `all` on gsi1 and under its tier on gsi3. */
export const {
  key: affiliateKey,
  parse: parseAffiliate,
  get: getAffiliate,
} = storedItem('affiliate', affiliateSchema, 'AFFILIATE#', (slug) => slug.toLowerCase());

/** Bucket of a tier's list (never equal to `all`). */
export const tierBucket = (tierSlug: string) => `tier:${tierSlug.toLowerCase()}`;
const tierBucketOf = (tierSlug: string | null) => (tierSlug === null ? undefined : tierBucket(tierSlug));

export const affiliateRecord = (
  merchantId: string,
  affiliate: Pick<AffiliateItem, 'slug' | 'seq' | 'name' | 'email'> &
    Partial<Pick<AffiliateItem, 'status' | 'accepted_at' | 'created_at'>> & { tier?: string | null },
  now = isoNow(),
) => {
  const status = affiliate.status ?? 'active';
  const tier = affiliate.tier?.toLowerCase() ?? null;
  const bucket = tierBucketOf(tier);
  return {
    ...affiliateKey(merchantId, affiliate.slug),
    ...primaryListEntry(merchantId, 'affiliates', ALL_BUCKET, affiliate.seq),
    ...(bucket === undefined ? {} : secondaryListEntry(merchantId, 'affiliates', bucket, affiliate.seq)),
    type: 'affiliate',
    slug: affiliate.slug.toLowerCase(),
    seq: affiliate.seq,
    name: affiliate.name,
    email: affiliate.email.toLowerCase(),
    status,
    tier_slug: tier,
    accepted_at: affiliate.accepted_at ?? (status === 'active' ? now : null),
    created_at: affiliate.created_at ?? now,
    updated_at: now,
  };
};

export const affiliateCountChanges = (affiliate: Pick<AffiliateItem, 'seq' | 'tier_slug'>): CountChange[] => {
  const bucket = tierBucketOf(affiliate.tier_slug);
  return [
    countChange('affiliates', ALL_BUCKET, affiliate.seq),
    ...(bucket === undefined ? [] : [countChange('affiliates', bucket, affiliate.seq)]),
  ];
};

/** Every affiliate (newest first), or those of one tier. */
export const affiliateList = (merchantId: string, tierSlug?: string | null): ListSpec<AffiliateItem> => {
  const bucket = tierSlug === undefined || tierSlug === null ? ALL_BUCKET : tierBucket(tierSlug);
  return { merchantId, list: 'affiliates', buckets: [bucket], parse: parseAffiliate };
};
