import type { FixtureMerchant } from '#shared/admin/fixture';
import { seedFixture } from '#shared/admin/seed';
import type { Store } from '#shared/admin/store';
import type { Stage } from '#shared/config';

/**
 * The soak's merchants: per stage, M merchants seeded like the demo (a user to send invites, one
 * token, two tiers, a default and a `shoes` segment, active and inactive affiliates, pending and
 * decided affiliate requests, invites, and a few orders of which one is linked to a payment and
 * one is too old to cancel). Every slug, e-mail and order_no carries the merchant's short name,
 * so nothing of one merchant can be mistaken for another's.
 */

export type SeededOrder = { uuid: string; orderNo: string; kind: 'plain' | 'paid' | 'old'; shipping: number };

export type SoakMerchant = {
  stage: Stage;
  /** Short name, unique across both stages (`l0`, `s3`): part of every slug, e-mail and order_no. */
  key: string;
  id: string;
  token: string;
  url: string;
  store: Store;
  sender: string;
  domain: string;
  activeSlugs: string[];
  inactiveSlug: string;
  tiers: string[];
  /** Pending requests as seeded (uuid -> applicant slug). */
  pendingRequests: Map<string, string>;
  decidedRequests: string[];
  seededOrders: SeededOrder[];
  seededInvites: string[];
};

export const TIERS = ['gold', 'silver'] as const;
/** Rates per tier (percent) of the default segment and of `shoes`: what the ledger check computes with. */
export const SEGMENT_RATES = { default: { gold: 10, silver: 7.5 }, shoes: { gold: 12.5, silver: 9 } } as const;
/** A substring some invite e-mails carry, for the invites list's `email` filter. */
export const INVITE_NEEDLE = 'needle';
const ACTIVE_AFFILIATES = 6;

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

const merchantFixture = (key: string, pendingRequests: number): FixtureMerchant => {
  const domain = `${key}.soak.example`;
  const order = (suffix: string, extra: { created_at?: string; payment_id?: string } = {}) => ({
    key: suffix,
    order_no: `${key}-seed-${suffix}`,
    affiliate_slug: `${key}-aff-0`,
    currency_code: 'EUR',
    total_shipping_value: 495,
    customer: { name: 'Seeded Customer', email: `seeded@${domain}` },
    order_rows: [{ product_name: 'Tent', product_sku: 'TENT-2P', price_value: 19900, tax_value: 3781, quantity: 1 }],
    created_at: extra.created_at ?? daysAgo(1),
    ...(extra.payment_id ? { payment_id: extra.payment_id } : {}),
  });
  return {
    key,
    name: `Soak merchant ${key}`,
    currency: 'EUR',
    users: [{ email: `owner@${domain}`, name: 'Olivia Owner' }],
    tokens: [{ key: 'main' }],
    tiers: [
      { slug: 'gold', name: 'Gold', default: true },
      { slug: 'silver', name: 'Silver' },
    ],
    segments: [
      { key: 'default', name: 'Default', default: true, rates: { ...SEGMENT_RATES.default } },
      { key: 'shoes', name: 'Shoes', slugs: ['shoes'], rates: { ...SEGMENT_RATES.shoes } },
    ],
    affiliates: [
      ...Array.from({ length: ACTIVE_AFFILIATES }, (_, index) => ({
        slug: `${key}-aff-${index}`,
        name: `Affiliate ${index}`,
        email: `aff-${index}@${domain}`,
        tier: TIERS[index % TIERS.length],
        status: 'active' as const,
      })),
      { slug: `${key}-idle`, name: 'Idle', email: `idle@${domain}`, tier: 'silver', status: 'inactive' as const },
    ],
    affiliate_requests: [
      ...Array.from({ length: pendingRequests }, (_, index) => ({
        key: `pending-${index}`,
        status: 'pending' as const,
        requested_at: daysAgo(2),
        affiliate: { slug: `${key}-req-${index}`, name: `Applicant ${index}`, email: `req-${index}@${domain}` },
      })),
      // The inactive affiliate applies again: accepting reactivates it (its tier kept).
      {
        key: 'comeback',
        status: 'pending',
        requested_at: daysAgo(2),
        affiliate: { slug: `${key}-idle`, name: 'Idle', email: `idle@${domain}` },
      },
      ...(['accepted', 'declined'] as const).map((status) => ({
        key: `old-${status}`,
        status,
        requested_at: daysAgo(20),
        affiliate: { slug: `${key}-${status}`, name: `Old ${status}`, email: `${status}@${domain}` },
      })),
    ],
    invites: [
      { key: 'used', email: `used@${domain}`, link_used_at: daysAgo(3) },
      { key: 'open', email: `open-${INVITE_NEEDLE}@${domain}`, link_used_at: null },
    ],
    orders: [
      order('plain-0'),
      order('plain-1'),
      order('plain-2'),
      order('paid', { payment_id: `pay-${key}` }),
      order('old', { created_at: daysAgo(62) }),
    ],
  };
};

/**
 * Seeds `count` merchants into one stage and returns what the workload needs of each. An
 * accepted old request's applicant is not an affiliate here (the fixture has no link between
 * the two): it only fills the `accepted` list.
 */
export const seedMerchants = async (
  stage: Stage,
  store: Store,
  url: string,
  count: number,
  pendingRequests: number,
): Promise<SoakMerchant[]> => {
  const keys = Array.from({ length: count }, (_, index) => `${stage === 'live' ? 'l' : 's'}${index}`);
  const fixtures = keys.map((key) => merchantFixture(key, pendingRequests));
  const seeded = await seedFixture(store, stage, { merchants: fixtures });
  return fixtures.map((fixture): SoakMerchant => {
    const result = seeded.merchants[fixture.key];
    if (!result) throw new Error(`seeding did not return merchant ${fixture.key}`);
    const pending = new Map<string, string>();
    for (const request of fixture.affiliate_requests ?? []) {
      const uuid = result.affiliate_requests[request.key];
      if (uuid && request.status === 'pending') pending.set(uuid, request.affiliate.slug);
    }
    const kindOf = (orderKey: string): SeededOrder['kind'] => (orderKey === 'paid' ? 'paid' : orderKey === 'old' ? 'old' : 'plain');
    return {
      stage,
      key: fixture.key,
      id: result.id,
      token: result.tokens.main ?? '',
      url,
      store,
      sender: fixture.users?.[0]?.email ?? '',
      domain: `${fixture.key}.soak.example`,
      activeSlugs: (fixture.affiliates ?? []).filter((affiliate) => affiliate.status === 'active').map((affiliate) => affiliate.slug),
      inactiveSlug: `${fixture.key}-idle`,
      tiers: [...TIERS],
      pendingRequests: pending,
      decidedRequests: Object.entries(result.affiliate_requests)
        .filter(([key]) => key.startsWith('old-'))
        .map(([, uuid]) => uuid),
      seededOrders: (fixture.orders ?? []).map((order) => ({
        uuid: result.orders[order.key] ?? '',
        orderNo: order.order_no,
        kind: kindOf(order.key),
        shipping: order.total_shipping_value,
      })),
      seededInvites: (fixture.invites ?? []).map((invite) => invite.email),
    };
  });
};
