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

export const toTierResponse = (tier: TierItem) => ({
  name: tier.name,
  slug: tier.slug,
  description: tier.description,
  created_at: tier.created_at,
  updated_at: tier.updated_at,
});

/** Tiers in list order: by name, then slug (names need not be unique). */
export const byTierName = (a: TierItem, b: TierItem) => a.name.localeCompare(b.name) || a.slug.localeCompare(b.slug);

/** A segment as listed: without `tiers` (the spec gives those in the single-segment response only). */
export const toSegmentResponse = (segment: SegmentItem) => ({
  uuid: segment.uuid,
  name: segment.name,
  description: segment.description,
  type: { name: SEGMENT_TYPE_NAMES[segment.segment_type], slug: segment.segment_type },
  slugs: segment.slugs,
  skus: segment.skus,
  created_at: segment.created_at,
  updated_at: segment.updated_at,
});

/**
 * A single segment with its rate per tier: the merchant's tiers that have a rate in this segment,
 * in tier order. A rate keyed by a tier that no longer exists has no name to show and is left out.
 */
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
  name: affiliate.name,
  slug: affiliate.slug,
  status: affiliate.status,
  tier: tier ? { name: tier.name, slug: tier.slug } : null,
  accepted_at: affiliate.accepted_at,
  created_at: affiliate.created_at,
});

/** The status the accept response reports for an accepted request (the spec's `active`). */
const ACCEPTED_RESPONSE_STATUS = 'active' as const;

export const toAffiliateRequestResponse = (request: AffiliateRequestItem) => ({
  uuid: request.uuid,
  affiliate: { name: request.affiliate.name, slug: request.affiliate.slug },
  status: request.status as AffiliateRequestStatus | typeof ACCEPTED_RESPONSE_STATUS,
  requested_at: request.requested_at,
});

export const toAcceptedRequestResponse = (request: AffiliateRequestItem) => ({
  ...toAffiliateRequestResponse(request),
  status: ACCEPTED_RESPONSE_STATUS,
});

export const toInviteResponse = (invite: InviteItem) => ({
  uuid: invite.uuid,
  email: invite.email,
  link_used_at: invite.link_used_at,
  created_at: invite.created_at,
  updated_at: invite.updated_at,
});

/** What accepting a request does to the affiliate of its slug: none yet, create; inactive, reactivate; active, nothing. */
export const affiliateOnAccept = (
  existing: AffiliateItem | undefined,
): { kind: 'create' } | { kind: 'reactivate'; existing: AffiliateItem } | { kind: 'unchanged' } => {
  if (!existing) return { kind: 'create' };
  if (existing.status === 'active') return { kind: 'unchanged' };
  return { kind: 'reactivate', existing };
};
