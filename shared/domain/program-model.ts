import type { AffiliateItem } from '#shared/db/entities/affiliate';
import type { AffiliateRequestItem, AffiliateRequestStatus } from '#shared/db/entities/affiliate-request';
import type { InviteItem } from '#shared/db/entities/invite';
import type { SegmentItem } from '#shared/db/entities/segment';
import type { TierItem } from '#shared/db/entities/tier';

// The affiliate-program resources as the API shows them, one presenter each, and the transitions decided without I/O.

/** Display names of segment types (the spec shows one: percentage). */
const SEGMENT_TYPE_NAMES: Record<SegmentItem['segment_type'], string> = { percentage: 'Percentage' };

/** A percentage rate's display form: at most two decimals, no trailing zeros (12.5 -> "12.5%"), no float noise. */
export const formatVisualRate = (rate: number): string => `${Math.round(rate * 100) / 100}%`;

/** The fields an item shows, in the order the response lists them. */
export const pick = <T, K extends keyof T>(item: T, keys: readonly K[]) =>
  Object.fromEntries(keys.map((key) => [key, item[key]])) as Pick<T, K>;

export const toTierResponse = (tier: TierItem) => pick(tier, ['name', 'slug', 'description', 'created_at', 'updated_at']);

/** Tiers in list order: by name, then slug (names need not be unique). */
export const byTierName = (a: TierItem, b: TierItem) => a.name.localeCompare(b.name) || a.slug.localeCompare(b.slug);

/** A segment as listed: without `tiers` (the spec gives those in the single-segment response only). */
export const toSegmentResponse = (segment: SegmentItem) => ({
  ...pick(segment, ['uuid', 'name', 'description']),
  type: { name: SEGMENT_TYPE_NAMES[segment.segment_type], slug: segment.segment_type },
  ...pick(segment, ['slugs', 'skus', 'created_at', 'updated_at']),
});

/** A single segment with the rate of each of the merchant's tiers that has one, in tier order (a deleted tier's rate is left out). */
export const toSegmentDetailResponse = (segment: SegmentItem, tiers: readonly TierItem[]) => {
  const { created_at, updated_at, ...rest } = toSegmentResponse(segment);
  return {
    ...rest,
    tiers: [...tiers]
      .filter((tier) => typeof segment.rates[tier.slug] === 'number')
      .sort(byTierName)
      .map((tier) => {
        const rate = segment.rates[tier.slug] as number;
        return { name: tier.name, slug: tier.slug, rate, visual_rate: formatVisualRate(rate) };
      }),
    created_at,
    updated_at,
  };
};

/** `tier` is null when the affiliate has none, or when its tier no longer exists. */
export const toAffiliateResponse = (affiliate: AffiliateItem, tier: TierItem | undefined) => ({
  ...pick(affiliate, ['name', 'slug', 'status']),
  tier: tier ? pick(tier, ['name', 'slug']) : null,
  ...pick(affiliate, ['accepted_at', 'created_at']),
});

/** The status the accept response reports for an accepted request (the spec's `active`). */
const ACCEPTED_RESPONSE_STATUS = 'active' as const;

export const toAffiliateRequestResponse = (request: AffiliateRequestItem) => ({
  uuid: request.uuid,
  affiliate: pick(request.affiliate, ['name', 'slug']),
  status: request.status as AffiliateRequestStatus | typeof ACCEPTED_RESPONSE_STATUS,
  requested_at: request.requested_at,
});

export const toAcceptedRequestResponse = (request: AffiliateRequestItem) => ({
  ...toAffiliateRequestResponse(request),
  status: ACCEPTED_RESPONSE_STATUS,
});

export const toInviteResponse = (invite: InviteItem) => pick(invite, ['uuid', 'email', 'link_used_at', 'created_at', 'updated_at']);

/** What accepting a request does to the affiliate of its slug: none yet, create; inactive, reactivate; active, nothing. */
export const affiliateOnAccept = (
  existing: AffiliateItem | undefined,
): { kind: 'create' } | { kind: 'reactivate'; existing: AffiliateItem } | { kind: 'unchanged' } => {
  if (!existing) return { kind: 'create' };
  if (existing.status === 'active') return { kind: 'unchanged' };
  return { kind: 'reactivate', existing };
};
