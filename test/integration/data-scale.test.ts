/**
 * A merchant of any size. Concurrent creates for one merchant and one affiliate all
 * commit, order_no stays unique under a race, and every list pages exactly (full pages, exact
 * totals, no duplicates, newest first), also across a sequence number that a lost race left
 * unused. Runs against the real local stack; nothing here is timed.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { getOrder } from '#shared/db/entities/order';
import { quotaKey } from '#shared/db/entities/quota';
import { api, merchantFixture, orderBody, seedOne, storeFor } from './helpers';

const store = storeFor('live');
const SENDER = 'owner@merchant.example';
const minutesAfter = (base: string, minutes: number) => new Date(Date.parse(base) + minutes * 60_000).toISOString();
const historyOrder = (key: string, createdAt: string) => ({
  key,
  created_at: createdAt,
  order_no: `H-${key}`,
  affiliate_slug: 'alice',
  currency_code: 'EUR',
  total_shipping_value: 0,
  order_rows: [{ product_name: 'Tent', price_value: 100, quantity: 1 }],
});

type Page<T> = { items: T[]; total: number; lastPage: number };

/**
 * Every page of a list, from page 1 to the last page the first one announces, and the page after
 * it (which must be empty). `fetchPage` turns one page's response into its items and pagination.
 */
const walk = async <T>(fetchPage: (page: number) => Promise<Page<T>>): Promise<{ pages: T[][]; totals: number[]; beyond: T[] }> => {
  const first = await fetchPage(1);
  const pages = [first.items];
  const totals = [first.total];
  for (let page = 2; page <= first.lastPage; page++) {
    const next = await fetchPage(page);
    pages.push(next.items);
    totals.push(next.total);
  }
  return { pages, totals, beyond: (await fetchPage(first.lastPage + 1)).items };
};

/** Every page holds exactly `perPage` items except the last, which holds the rest; the walk equals `expected`. */
const expectExactPages = <T>(walked: { pages: T[][]; totals: number[]; beyond: T[] }, perPage: number, expected: readonly T[]) => {
  const sizes = walked.pages.map((page) => page.length);
  const full = Math.floor(expected.length / perPage);
  const rest = expected.length % perPage;
  expect(sizes).toEqual([...Array<number>(full).fill(perPage), ...(rest > 0 || expected.length === 0 ? [rest] : [])]);
  expect(walked.totals.every((total) => total === expected.length)).toBe(true);
  expect(walked.pages.flat()).toEqual(expected);
  expect(new Set(walked.pages.flat()).size).toBe(expected.length);
  expect(walked.beyond).toEqual([]);
};

/** Orders are listed newest first: by their sequence number, highest first, as the table holds it. */
const sequenceNumbers = (merchantId: string, uuids: readonly string[]) =>
  Promise.all(uuids.map(async (uuid) => (await getOrder(store, merchantId, uuid, true))?.seq ?? Number.NaN));

const orderPages = (token: string, perPage: number) =>
  walk<string>(async (page) => {
    const res = await api('live', token).get(`/api/v2/orders?per_page=${perPage}&page=${page}`);
    expect(res.status).toBe(200);
    return {
      items: res.body.data.orders.map((order: { uuid: string }) => order.uuid),
      total: res.body.meta.pagination.total,
      lastPage: res.body.meta.pagination.last_page,
    };
  });

describe('order creates for one merchant and one affiliate', () => {
  it('gives 100 concurrent creates 100 x 201; the list then has the exact total and full pages, newest first', async () => {
    // Prepare: a merchant with some history (older orders of the same affiliate).
    const history = Array.from({ length: 7 }, (_, index) => historyOrder(`h${index}`, minutesAfter('2026-01-01T00:00:00.000Z', index)));
    const merchant = await seedOne(merchantFixture({ key: 'burst', orders: history }));
    const client = api('live', merchant.tokens.live);

    // Act
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, index) => client.post('/api/v2/orders/create', orderBody({ order_no: `B-${index}` }))),
    );

    // Assess
    expect(results.map((res) => res.status)).toEqual(Array<number>(100).fill(201));
    const created = results.map((res) => res.body.data.order.uuid as string);
    expect(new Set(created).size).toBe(100);
    const walked = await orderPages(merchant.tokens.live as string, 15);
    const listed = walked.pages.flat();
    const seeded = history.map((order) => merchant.orders[order.key] as string).reverse();
    // The 100 new orders come first (they are newer than all history), then the history, newest first.
    expect(new Set(listed.slice(0, 100))).toEqual(new Set(created));
    expectExactPages(walked, 15, [...listed.slice(0, 100), ...seeded]);
    const seqs = await sequenceNumbers(merchant.id, listed);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(seqs).size).toBe(107);
  }, 120_000);

  it('gives exactly one 201 and 19 x 422 to 20 concurrent creates with one order_no, and lists the one order once', async () => {
    // Prepare
    const merchant = await seedOne(merchantFixture({ key: 'race20' }));
    const client = api('live', merchant.tokens.live);
    const body = orderBody({ order_no: `RACE-${randomUUID()}` });

    // Act
    const results = await Promise.all(Array.from({ length: 20 }, () => client.post('/api/v2/orders/create', body)));

    // Assess
    const won = results.filter((res) => res.status === 201);
    const refused = results.filter((res) => res.status === 422);
    expect(won).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const res of refused) expect(res.body.errors).toEqual({ order_no: ['The order no has already been taken.'] });
    const walked = await orderPages(merchant.tokens.live as string, 15);
    expectExactPages(walked, 15, [won[0]?.body.data.order.uuid]);
  });

  it('leaves no visible gap and an exact total where creates that lost an order_no race left their sequence numbers unused', async () => {
    // Prepare: two orders of history; a race of 10 creates on one order_no, each taking a number
    // beside its reads: the 9 that lose it leave theirs unused.
    const history = [historyOrder('h0', '2026-01-01T00:00:00.000Z'), historyOrder('h1', '2026-01-02T00:00:00.000Z')];
    const merchant = await seedOne(merchantFixture({ key: 'gap', orders: history }));
    const client = api('live', merchant.tokens.live);
    const race = await Promise.all(
      Array.from({ length: 10 }, () => client.post('/api/v2/orders/create', orderBody({ order_no: 'SAME-1' }))),
    );

    // Act
    const later: string[] = [];
    for (let index = 0; index < 5; index++) {
      const res = await client.post('/api/v2/orders/create', orderBody({ order_no: `AFTER-${index}` }));
      expect(res.status).toBe(201);
      later.push(res.body.data.order.uuid);
    }
    const walked = await orderPages(merchant.tokens.live as string, 3);

    // Assess
    expect(race.filter((res) => res.status === 201)).toHaveLength(1);
    expect(race.filter((res) => res.status === 422)).toHaveLength(9);
    const winner = race.find((res) => res.status === 201)?.body.data.order.uuid as string;
    const expected = [...later.reverse(), winner, merchant.orders.h1 as string, merchant.orders.h0 as string];
    expectExactPages(walked, 3, expected);
    // The hole is real: the sequence has handed out more numbers than there are orders, and the
    // listed orders' numbers skip at least one, yet every page above is full.
    const { Item } = await store.ddb.send(new GetCommand({ TableName: store.table, Key: quotaKey(merchant.id), ConsistentRead: true }));
    expect(Item?.orders_seq).toBeGreaterThan(expected.length);
    const seqs = await sequenceNumbers(merchant.id, expected);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect((seqs[0] as number) - (seqs.at(-1) as number) + 1).toBeGreaterThan(expected.length);
  });
});

describe('affiliate lists', () => {
  let merchant: SeededMerchant;
  const slugs = Array.from({ length: 40 }, (_, index) => `aff-${String(index).padStart(2, '0')}`);
  const tierOf = (index: number) => (index % 3 === 0 ? 'gold' : 'silver');

  beforeAll(async () => {
    merchant = await seedOne(
      merchantFixture({
        key: 'affiliates40',
        tiers: [
          { slug: 'gold', name: 'Gold' },
          { slug: 'silver', name: 'Silver' },
        ],
        // Not in slug order: the seed orders them itself.
        affiliates: [...slugs].reverse().map((slug) => ({
          slug,
          name: slug.toUpperCase(),
          email: `${slug}@example.com`,
          tier: tierOf(slugs.indexOf(slug)),
          status: 'active' as const,
        })),
      }),
    );
  });

  const affiliatePages = (query: string, perPage: number) =>
    walk<string>(async (page) => {
      const res = await api('live', merchant.tokens.live).get(`/api/v2/affiliates?per_page=${perPage}&page=${page}${query}`);
      expect(res.status).toBe(200);
      return {
        items: res.body.data.affiliates.map((affiliate: { slug: string }) => affiliate.slug),
        total: res.body.meta.pagination.total,
        lastPage: res.body.meta.pagination.last_page,
      };
    });

  // Seeded together, so equal created_at: newest first is then slug order, as the seed writes them.
  it('pages through every affiliate exactly, newest first', async () => {
    // Act
    const walked = await affiliatePages('', 7);

    // Assess
    expectExactPages(walked, 7, slugs);
  });

  it.each([
    ['gold', 'gold'],
    ['SILVER', 'silver'],
  ])('pages exactly through the affiliates of one tier (tier_slug=%s)', async (query, tier) => {
    // Act
    const walked = await affiliatePages(`&tier_slug=${query}`, 4);

    // Assess
    expectExactPages(
      walked,
      4,
      slugs.filter((_, index) => tierOf(index) === tier),
    );
  });

  it('lists nothing for a tier without affiliates', async () => {
    // Act
    const walked = await affiliatePages('&tier_slug=platinum', 4);

    // Assess
    expectExactPages(walked, 4, []);
  });
});

describe('affiliate request lists', () => {
  let merchant: SeededMerchant;
  const STATUSES = ['pending', 'accepted', 'declined'] as const;
  const requests = Array.from({ length: 30 }, (_, index) => ({
    key: `r${index}`,
    status: STATUSES[index % 5 < 2 ? 0 : index % 5 < 4 ? 1 : 2] as (typeof STATUSES)[number],
    requested_at: minutesAfter('2026-02-01T00:00:00.000Z', index),
    affiliate: { slug: `req-${index}`, name: `Requester ${index}`, email: `req-${index}@example.com` },
  }));

  beforeAll(async () => {
    merchant = await seedOne(merchantFixture({ key: 'requests30', affiliate_requests: [...requests].reverse() }));
  });

  /** The uuids of the requests in these statuses, newest requested_at first. */
  const expectedFor = (statuses: readonly string[]) =>
    requests
      .filter((request) => statuses.includes(request.status))
      .sort((a, b) => b.requested_at.localeCompare(a.requested_at))
      .map((request) => merchant.affiliate_requests[request.key] as string);

  const requestPages = (status: string | undefined, perPage: number) =>
    walk<string>(async (page) => {
      const res = await api('live', merchant.tokens.live).get(
        `/api/v2/affiliate-requests?per_page=${perPage}&page=${page}${status ? `&status=${status}` : ''}`,
      );
      expect(res.status).toBe(200);
      return {
        items: res.body.data.map((request: { uuid: string }) => request.uuid),
        total: res.body.meta.pagination.total,
        lastPage: res.body.meta.pagination.last_page,
      };
    });

  it.each([
    [undefined, ['pending']],
    ['accepted', ['accepted']],
    ['pending,declined', ['pending', 'declined']],
    ['declined,accepted,pending', ['pending', 'accepted', 'declined']],
  ])('pages exactly through status=%s, newest first', async (status, statuses) => {
    // Act
    const walked = await requestPages(status, 4);

    // Assess
    expectExactPages(walked, 4, expectedFor(statuses));
  });

  it('moves a decided request from one status list to the other, keeping both exact', async () => {
    // Prepare
    const client = api('live', merchant.tokens.live);
    const pending = requests
      .filter((request) => request.status === 'pending')
      .map((request) => merchant.affiliate_requests[request.key] as string);
    const target = pending[3] as string;

    // Act
    expect((await client.post(`/api/v2/affiliate-requests/${target}/decline`)).status).toBe(200);

    // Assess
    const stillPending = await requestPages('pending', 4);
    expectExactPages(
      stillPending,
      4,
      expectedFor(['pending']).filter((uuid) => uuid !== target),
    );
    const decided = (await requestPages('declined,pending', 5)).pages.flat();
    expect(decided).toEqual(expectedFor(['pending', 'declined']));
  });
});

describe('invite lists', () => {
  let merchant: SeededMerchant;
  const tag = randomUUID().slice(0, 8);
  const emails = Array.from(
    { length: 25 },
    (_, index) => `guest-${String(index).padStart(2, '0')}.${tag}@${index % 2 === 0 ? 'alpha' : 'beta'}.example`,
  );

  beforeAll(async () => {
    merchant = await seedOne(merchantFixture({ key: 'invites25', invites: emails.map((email, index) => ({ key: `i${index}`, email })) }));
  });

  const invitePages = (email: string | undefined, perPage: number) =>
    walk<string>(async (page) => {
      const res = await api('live', merchant.tokens.live).get(
        `/api/v2/affiliates/invites?per_page=${perPage}&page=${page}${email ? `&email=${encodeURIComponent(email)}` : ''}`,
      );
      expect(res.status).toBe(200);
      const pagination = res.body.meta.pagination;
      expect(pagination.count).toBe(res.body.data.length);
      return {
        items: res.body.data.map((invite: { uuid: string }) => invite.uuid),
        total: pagination.total,
        lastPage: pagination.total_pages,
      };
    });

  /** Seeded together: newest first is the order the seed wrote them in (uuid order). */
  const seededOrder = (filter: (email: string) => boolean) =>
    emails
      .map((email, index) => ({ email, uuid: merchant.invites[`i${index}`] as string }))
      .filter((invite) => filter(invite.email))
      .map((invite) => invite.uuid)
      .sort();

  it('pages exactly through every invite, newest first', async () => {
    // Act
    const walked = await invitePages(undefined, 6);

    // Assess
    expectExactPages(
      walked,
      6,
      seededOrder(() => true),
    );
  });

  it('pages exactly through the invites whose address contains the email filter, in any casing', async () => {
    // Act
    const walked = await invitePages('ALPHA.example', 4);

    // Assess
    expectExactPages(
      walked,
      4,
      seededOrder((email) => email.includes('@alpha.')),
    );
  });

  it('finds an invite made through the API first, and counts it in the filtered total', async () => {
    // Prepare
    const email = `late.${tag}@alpha.example`;
    const made = await api('live', merchant.tokens.live).post('/api/v2/affiliates/invite', { email, sender_email: SENDER });
    expect(made.status).toBe(200);

    // Act
    const walked = await invitePages(`${tag}@alpha`, 5);

    // Assess
    expectExactPages(walked, 5, [made.body.data.invite.uuid, ...seededOrder((candidate) => candidate.includes('@alpha.'))]);
  });

  it('matches nothing, with a total of 0, for an address no invite contains', async () => {
    // Act
    const walked = await invitePages(`nobody-${tag}`, 5);

    // Assess
    expect(walked.totals).toEqual([0]);
    expect(walked.pages).toEqual([[]]);
  });
});
