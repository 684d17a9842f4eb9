import { randomUUID } from 'node:crypto';
import { keys } from '../db/keys';
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
export type AffiliateRequestItem = {
  type: 'affiliate_request';
  uuid: string;
  status: AffiliateRequestStatus;
  affiliate: { slug: string; name: string; email: string };
  requested_at: string;
  decided_at: string | null;
  updated_at: string;
};
export type InviteItem = {
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
