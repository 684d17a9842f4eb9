import { randomUUID } from 'node:crypto';
import type { Stage } from '#shared/config';
import { affiliateCountChanges, affiliateRecord } from '#shared/db/entities/affiliate';
import { affiliateRequestRecord, requestCountChange } from '#shared/db/entities/affiliate-request';
import { isRefused } from '#shared/db/entities/base';
import { batchPut } from '#shared/db/entities/batch';
import { applyCountChanges, blockOf, type CountChange, refreshGroupTotals, takeSequence } from '#shared/db/entities/counter';
import { customerRecord } from '#shared/db/entities/customer';
import { addToEmailProjection, inviteCountChange, inviteRecord } from '#shared/db/entities/invite';
import { inviteEmailRecord } from '#shared/db/entities/invite-email';
import { getMerchant, putNewMerchant } from '#shared/db/entities/merchant';
import { buildOrder, orderCountChange, orderRecord, orderUuidFor } from '#shared/db/entities/order';
import { orderNoRecord } from '#shared/db/entities/order-no';
import { segmentRecord } from '#shared/db/entities/segment';
import { tierRecord } from '#shared/db/entities/tier';
import { findToken, tokenRecord } from '#shared/db/entities/token';
import { userRecord } from '#shared/db/entities/user';
import { isoNow, toIso } from '#shared/time';
import { hashToken, tokenKindOfStage } from '#shared/tokens';
import { type Fixture, type FixtureMerchant, fixedTokenValues, fixtureProblems } from './fixture';
import type { Store } from './store';

/** A seeded merchant's id, and by fixture key its tokens' values and its segments', requests', invites' and orders' uuids. */
export type SeededMerchant = { id: string } & Record<
  'tokens' | 'segments' | 'affiliate_requests' | 'invites' | 'orders',
  Record<string, string>
>;

export type SeedResult = { stage: Stage; merchants: Record<string, SeededMerchant> };

/** The tier a merchant gives affiliates that join without one: the marked one, else the first; a merchant without tiers gets one. */
const DEFAULT_TIER = { slug: 'default', name: 'Default', description: 'Every affiliate until assigned another tier' };

/** Oldest first, so sequence numbers follow time; equal times show in ascending `tie` order in the newest-first lists, as always. */
const oldestFirst = <T>(items: readonly T[], order: (item: T) => [at: string, tie: string]) =>
  [...items].sort((a, b) => {
    const [[atA, tieA], [atB, tieB]] = [order(a), order(b)];
    return atA.localeCompare(atB) || tieB.localeCompare(tieA);
  });

/** `count` sequence numbers of a list (none taken for none), taken as an import: the seed writes their items and totals itself. */
const sequences = async (store: Store, merchantId: string, list: Parameters<typeof takeSequence>[2], count: number) =>
  count === 0 ? 0 : takeSequence(store, merchantId, list, count, true);

/** What one merchant's seed gathers: the items to put, the list count changes, and the ids and tokens it returns. */
type Seeding = {
  store: Store;
  id: string;
  now: string;
  result: SeededMerchant;
  items: Record<string, unknown>[];
  counts: CountChange[];
};

/** Users, tokens, tiers and segments (a default segment unless the fixture names one). */
const programItems = (
  seeding: Seeding,
  stage: Stage,
  merchant: FixtureMerchant,
  tiers: readonly NonNullable<FixtureMerchant['tiers']>[number][],
) => {
  const { id, now, result, items } = seeding;
  for (const user of merchant.users ?? []) items.push(userRecord(id, user));
  for (const token of merchant.tokens ?? []) {
    const { value, item } = tokenRecord(id, { ...token, kind: token.kind ?? tokenKindOfStage(stage), label: token.key });
    result.tokens[token.key] = value;
    items.push(item);
  }
  for (const tier of tiers) items.push(tierRecord(id, tier, now));
  const segments = [...(merchant.segments ?? [])];
  if (!segments.some((segment) => segment.default))
    segments.unshift({ key: 'default', name: 'Default', description: 'Rows without a matching segment slug', default: true });
  for (const segment of segments) {
    const item = segmentRecord(id, segment, now);
    result.segments[segment.key] = item.uuid;
    items.push(item);
  }
};

const affiliateItems = async (seeding: Seeding, merchant: FixtureMerchant, defaultTier: string) => {
  const { store, id, now, items, counts } = seeding;
  const affiliates = oldestFirst(merchant.affiliates ?? [], (affiliate) => [now, affiliate.slug.toLowerCase()]);
  let seq = await sequences(store, id, 'affiliates', affiliates.length);
  for (const affiliate of affiliates) {
    const accepted_at = affiliate.accepted_at ? toIso(affiliate.accepted_at) : undefined;
    const item = affiliateRecord(id, { ...affiliate, seq: seq++, tier: affiliate.tier ?? defaultTier, accepted_at }, now);
    items.push(item);
    counts.push(...affiliateCountChanges(item));
  }
};

const requestItems = async (seeding: Seeding, merchant: FixtureMerchant) => {
  const { store, id, now, result, items, counts } = seeding;
  const requests = oldestFirst(
    (merchant.affiliate_requests ?? []).map((request) => ({
      ...request,
      uuid: request.uuid ?? randomUUID(),
      requested_at: request.requested_at ? toIso(request.requested_at) : now,
    })),
    (request) => [request.requested_at, request.uuid],
  );
  let seq = await sequences(store, id, 'affiliate_requests', requests.length);
  for (const request of requests) {
    const item = affiliateRequestRecord(id, { ...request, seq: seq++ }, now);
    result.affiliate_requests[request.key] = item.uuid;
    items.push(item);
    counts.push(requestCountChange(item, item.status, 1));
  }
};

/** The invitations with their e-mail guards; returns them for the e-mail projection. */
const inviteItems = async (seeding: Seeding, merchant: FixtureMerchant) => {
  const { store, id, now, result, items, counts } = seeding;
  const invites = oldestFirst(
    (merchant.invites ?? []).map((invite) => ({ ...invite, uuid: invite.uuid ?? randomUUID() })),
    (invite) => [now, invite.uuid],
  );
  let seq = await sequences(store, id, 'invites', invites.length);
  return invites.map((invite) => {
    const item = inviteRecord(id, { ...invite, seq: seq++, link_used_at: invite.link_used_at ? toIso(invite.link_used_at) : null }, now);
    result.invites[invite.key] = item.uuid;
    items.push(item, inviteEmailRecord(id, item.email, item.uuid));
    counts.push(inviteCountChange(item));
    return item;
  });
};

/** The orders, oldest first so the sequence follows creation time, with their customers; history: the change feed announces none of them. */
const orderItems = async (seeding: Seeding, merchant: FixtureMerchant) => {
  const { store, id, now, result, items, counts } = seeding;
  const orders = oldestFirst(merchant.orders ?? [], (order) => [order.created_at ? toIso(order.created_at) : now, order.key]);
  const customers = new Map<string, Record<string, unknown>>();
  let seq = await sequences(store, id, 'orders', orders.length);
  for (const order of orders) {
    const item = buildOrder(order, {
      uuid: order.uuid ?? orderUuidFor(id, order.order_no),
      seq: seq++,
      created_at: order.created_at ? toIso(order.created_at) : now,
      cancelled_at: order.cancelled_at ? toIso(order.cancelled_at) : undefined,
      payment_id: order.payment_id,
    });
    // Stored as the API stores it, its key its own order_no guard; a fixed uuid is stored as an order from before derived keys, beside its guard.
    items.push(orderRecord(id, item, { history: true }), ...(order.uuid ? [orderNoRecord(id, item.order_no, item.uuid)] : []));
    counts.push(orderCountChange(item));
    const customer = item.customer && customerRecord(id, item.customer, item.created_at);
    if (customer && !customers.has(customer.sk)) customers.set(customer.sk, customer);
    result.orders[order.key] = item.uuid;
  }
  items.push(...customers.values());
};

/** Seeds one new merchant: items built as the API builds them, put in batches, then the list counts (docs/architecture.md#fixtures). */
const seedMerchant = async (store: Store, stage: Stage, merchant: FixtureMerchant): Promise<SeededMerchant> => {
  const id = merchant.id ?? randomUUID();
  const seeding: Seeding = {
    store,
    id,
    now: isoNow(),
    result: { id, tokens: {}, segments: {}, affiliate_requests: {}, invites: {}, orders: {} },
    items: [],
    counts: [],
  };
  const tiers = merchant.tiers?.length ? merchant.tiers : [DEFAULT_TIER];
  const defaultTier = (tiers.find((tier) => 'default' in tier && tier.default) ?? tiers[0] ?? DEFAULT_TIER).slug.toLowerCase();
  await putNewMerchant(store, { id, name: merchant.name, currency: merchant.currency, defaultTier }).catch((error: unknown) => {
    throw isRefused(error) ? new Error(`merchant ${merchant.key}: id ${id} already exists in the ${stage} table`) : error;
  });
  programItems(seeding, stage, merchant, tiers);
  await affiliateItems(seeding, merchant, defaultTier);
  await requestItems(seeding, merchant);
  const invites = await inviteItems(seeding, merchant);
  await orderItems(seeding, merchant);

  const { items, counts } = seeding;
  await batchPut(store, items);
  await Promise.all([applyCountChanges(store, id, counts), addToEmailProjection(store, id, invites)]);
  await refreshGroupTotals(
    store,
    id,
    counts.map((change) => ({ ...change, block: blockOf(change.seq) })),
  );
  return seeding.result;
};

/** Loads a fixture into a stage's table as new merchants, refused whole for a problem or a fixed id or token already there. */
export const seedFixture = async (store: Store, stage: Stage, fixture: Fixture): Promise<SeedResult> => {
  const problems = fixtureProblems(fixture);
  const fixedIds = fixture.merchants.flatMap((merchant) => (merchant.id ? [merchant.id] : []));
  const fixedTokens = fixedTokenValues(fixture);
  const [existing, tokensTaken] = await Promise.all([
    Promise.all(fixedIds.map((id) => getMerchant(store, id, true))),
    Promise.all(fixedTokens.map((value) => findToken(store, hashToken(value)))),
  ]);
  problems.push(
    ...fixedIds.filter((_, at) => existing[at] !== undefined).map((id) => `merchant id ${id} already exists in the ${stage} table`),
    ...tokensTaken.filter((found) => found !== undefined).map(() => `a token value is already in the ${stage} table`),
  );
  if (problems.length > 0) throw new Error(`Invalid fixture:\n  ${problems.join('\n  ')}`);
  const merchants: Record<string, SeededMerchant> = {};
  for (const merchant of fixture.merchants) merchants[merchant.key] = await seedMerchant(store, stage, merchant);
  return { stage, merchants };
};
