import { randomUUID } from 'node:crypto';
import { indexKeys, keys } from '../db/keys';
import { isoNow } from '../time';

/**
 * The stored shapes of the affiliate-program items and their builders, without I/O. The seed, the
 * admin CLI and the endpoints all build items here, so there is one shape per item type.
 */

export type AffiliateStatus = 'active' | 'inactive';
export type AffiliateRequestStatus = 'pending' | 'accepted' | 'declined';

export type UserItem = { type: 'user'; email: string; name: string | null };
export type TierItem = { type: 'tier'; slug: string; name: string; description: string; created_at: string; updated_at: string };
export type SegmentItem = {
  type: 'segment';
  uuid: string;
  name: string;
  description: string;
  segment_type: 'percentage';
  slugs: string[];
  skus: string[];
  /** Commission rate per tier slug, in percent. */
  rates: Record<string, number>;
  is_default: boolean;
  created_at: string;
  updated_at: string;
};
export type AffiliateItem = {
  type: 'affiliate';
  slug: string;
  name: string;
  email: string;
  status: AffiliateStatus;
  tier_slug: string | null;
  accepted_at: string | null;
  created_at: string;
  updated_at: string;
};
/**
 * The e-mail an item owes its recipient (invitation, accept/decline notice). Set in the same write
 * as the state change, so the debt is durable; cleared once SES took the message. An item that
 * still carries `notification_pending_at` is what `npm run admin -- resend-notifications` sends.
 */
export type NotificationState = {
  notification_pending_at?: string;
  notification_failed_at?: string;
  notified_at?: string;
};

export type AffiliateRequestItem = NotificationState & {
  type: 'affiliate_request';
  uuid: string;
  status: AffiliateRequestStatus;
  affiliate: { slug: string; name: string; email: string };
  requested_at: string;
  decided_at: string | null;
  updated_at: string;
};
export type InviteItem = NotificationState & {
  type: 'invite';
  uuid: string;
  email: string;
  sender_email: string | null;
  content: string | null;
  link_used_at: string | null;
  created_at: string;
  updated_at: string;
};

export const userItem = (merchantId: string, user: { email: string; name?: string | null }) => ({
  ...keys.user(merchantId, user.email),
  type: 'user',
  email: user.email.toLowerCase(),
  name: user.name ?? null,
}) satisfies UserItem & object;

export const tierItem = (merchantId: string, tier: { slug: string; name: string; description?: string | null }, now = isoNow()) => ({
  ...keys.tier(merchantId, tier.slug.toLowerCase()),
  type: 'tier',
  slug: tier.slug.toLowerCase(),
  name: tier.name,
  description: tier.description ?? '',
  created_at: now,
  updated_at: now,
}) satisfies TierItem & object;

export const segmentItem = (
  merchantId: string,
  segment: { uuid?: string; name: string; description?: string | null; slugs?: string[]; skus?: string[]; rates?: Record<string, number>; default?: boolean },
  now = isoNow(),
) => {
  const uuid = segment.uuid ?? randomUUID();
  return {
    ...keys.segment(merchantId, uuid),
    type: 'segment',
    uuid,
    name: segment.name,
    description: segment.description ?? '',
    segment_type: 'percentage',
    slugs: segment.slugs ?? [],
    skus: segment.skus ?? [],
    rates: segment.rates ?? {},
    is_default: segment.default ?? false,
    created_at: now,
    updated_at: now,
  } satisfies SegmentItem & object;
};

export const affiliateItem = (
  merchantId: string,
  affiliate: { slug: string; name: string; email: string; status?: AffiliateStatus; tier?: string | null; accepted_at?: string | null },
  now = isoNow(),
) => {
  const status = affiliate.status ?? 'active';
  return {
    ...keys.affiliate(merchantId, affiliate.slug),
    type: 'affiliate',
    slug: affiliate.slug.toLowerCase(),
    name: affiliate.name,
    email: affiliate.email.toLowerCase(),
    status,
    tier_slug: affiliate.tier?.toLowerCase() ?? null,
    accepted_at: affiliate.accepted_at ?? (status === 'active' ? now : null),
    created_at: now,
    updated_at: now,
  } satisfies AffiliateItem & object;
};

export const affiliateRequestItem = (
  merchantId: string,
  request: { uuid?: string; status?: AffiliateRequestStatus; affiliate: { slug: string; name: string; email: string }; requested_at?: string },
  now = isoNow(),
) => {
  const uuid = request.uuid ?? randomUUID();
  const status = request.status ?? 'pending';
  return {
    ...keys.affiliateRequest(merchantId, uuid),
    type: 'affiliate_request',
    uuid,
    status,
    affiliate: { slug: request.affiliate.slug.toLowerCase(), name: request.affiliate.name, email: request.affiliate.email.toLowerCase() },
    requested_at: request.requested_at ?? now,
    decided_at: status === 'pending' ? null : now,
    updated_at: now,
  } satisfies AffiliateRequestItem & object;
};

export const inviteItem = (
  merchantId: string,
  invite: { uuid?: string; email: string; sender_email?: string | null; content?: string | null; link_used_at?: string | null },
  now = isoNow(),
) => {
  const uuid = invite.uuid ?? randomUUID();
  return {
    ...keys.invite(merchantId, uuid),
    type: 'invite',
    uuid,
    email: invite.email.toLowerCase(),
    sender_email: invite.sender_email ?? null,
    content: invite.content ?? null,
    link_used_at: invite.link_used_at ?? null,
    created_at: now,
    updated_at: now,
  } satisfies InviteItem & object;
};

/** The guard that keeps one invitation per e-mail address and merchant. */
export const inviteEmailGuard = (merchantId: string, email: string, inviteUuid: string) => ({
  ...keys.inviteEmail(merchantId, email),
  type: 'invite_email',
  invite_uuid: inviteUuid,
});

// ---------------------------------------------------------------------------------------------
// Presenters: stored item -> the spec's resource shape. One per resource, used by every endpoint
// (and the admin CLI) that shows it, so a field cannot differ between list and single responses.
// ---------------------------------------------------------------------------------------------

/** Display names of segment types (the spec shows one: percentage). */
export const SEGMENT_TYPE_NAMES: Record<SegmentItem['segment_type'], string> = { percentage: 'Percentage' };

/**
 * A percentage rate's display form: at most two decimals, no trailing zeros, so 12.5 -> "12.5%",
 * 10 -> "10%", and float noise (0.1 + 0.2) never reaches the merchant.
 */
export const formatVisualRate = (rate: number, type: SegmentItem['segment_type'] = 'percentage'): string => {
  const rounded = Math.round(rate * 100) / 100;
  const text = Object.is(rounded, -0) ? '0' : String(rounded);
  switch (type) {
    case 'percentage':
      return `${text}%`;
  }
};

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
        return { name: tier.name, slug: tier.slug, rate, visual_rate: formatVisualRate(rate, segment.segment_type) };
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
export const ACCEPTED_RESPONSE_STATUS = 'active';

export const toAffiliateRequestResponse = (request: AffiliateRequestItem) => ({
  uuid: request.uuid,
  affiliate: { name: request.affiliate.name, slug: request.affiliate.slug },
  status: request.status as AffiliateRequestStatus | typeof ACCEPTED_RESPONSE_STATUS,
  requested_at: request.requested_at,
});

/** The accept endpoint's view: the spec reports an accepted request as `active` there. */
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

/** Newest first, then by a stable id, so equal timestamps never reorder between pages. */
export const newestFirst =
  <T>(at: (item: T) => string, id: (item: T) => string) =>
  (a: T, b: T) =>
    at(b).localeCompare(at(a)) || id(a).localeCompare(id(b));

// ---------------------------------------------------------------------------------------------
// Transitions without I/O
// ---------------------------------------------------------------------------------------------

/**
 * What accepting a request does to the affiliate of the same slug, decided from the item as read:
 * - none yet: a new active affiliate (accepted now, no tier);
 * - inactive: reactivated, accepted now, name and e-mail from the request; tier and created_at kept;
 * - already active: unchanged (the request is still accepted; nothing about the affiliate moves).
 */
export type AffiliateOnAccept =
  | { kind: 'create'; item: ReturnType<typeof affiliateItem> }
  | { kind: 'reactivate'; item: AffiliateItem & { pk: string; sk: string }; seenUpdatedAt: string }
  | { kind: 'unchanged' };

export const affiliateOnAccept = (
  merchantId: string,
  request: Pick<AffiliateRequestItem, 'affiliate'>,
  existing: AffiliateItem | undefined,
  now: string,
): AffiliateOnAccept => {
  if (!existing) {
    return { kind: 'create', item: affiliateItem(merchantId, { ...request.affiliate, status: 'active', accepted_at: now }, now) };
  }
  if (existing.status === 'active') return { kind: 'unchanged' };
  const rebuilt = affiliateItem(merchantId, { ...request.affiliate, status: 'active', tier: existing.tier_slug, accepted_at: now }, now);
  // Spread the stored item first: attributes this builder does not know survive the Put.
  return { kind: 'reactivate', item: { ...existing, ...rebuilt, created_at: existing.created_at }, seenUpdatedAt: existing.updated_at };
};

/**
 * What an item that owes an e-mail carries, written in the same write as the state change that
 * owes it: the marker, and its entry on the outbox index for the notification relay.
 */
export const owedNotification = (now: string) => ({ notification_pending_at: now, ...indexKeys.notificationPending(now) });

/**
 * The updates that settle an owed e-mail (see NotificationState): sent clears the debt and its
 * outbox entry; failed records when it failed and moves the entry to now, so the notification
 * relay tries again after its minimum age. Shared by the API, the relay and the admin CLI.
 */
export const notificationSettledUpdate = (key: { pk: string; sk: string }, outcome: 'sent' | 'failed', now: string) => ({
  Key: key,
  UpdateExpression:
    outcome === 'sent'
      ? 'SET notified_at = :now REMOVE notification_pending_at, notification_failed_at, gsi2pk, gsi2sk'
      : 'SET notification_failed_at = :now, gsi2sk = :now',
  ConditionExpression: 'attribute_exists(pk)',
  ExpressionAttributeValues: { ':now': now },
});
