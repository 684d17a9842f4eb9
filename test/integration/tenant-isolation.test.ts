import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, merchantFixture, seed, TRACE_ID } from './helpers';
import { mailsTo, uniqueEmail } from './program-helpers';

/**
 * Every route that names one item answers 404, in the V2 envelope, when the item is another
 * merchant's: the caller learns nothing of it (not even that it exists), and it is left as it was.
 * One table, one row per route; the per-resource files test missing items and malformed paths.
 */

let acme: SeededMerchant;
let other: SeededMerchant;
const OTHER_EMAIL = uniqueEmail('foreign');

beforeAll(async () => {
  const seeded = await seed([
    merchantFixture({ key: 'acme' }),
    merchantFixture({
      key: 'other',
      tiers: [{ slug: 'platinum', name: 'Platinum' }],
      segments: [{ key: 'theirs', name: 'Theirs', default: true }],
      affiliates: [{ slug: 'olga', name: 'Olga', email: 'olga@example.com', tier: 'platinum', status: 'active' }],
      affiliate_requests: [{ key: 'theirs', affiliate: { slug: 'zed', name: 'Zed', email: OTHER_EMAIL } }],
      orders: [
        {
          key: 'theirs',
          order_no: 'T-1',
          affiliate_slug: 'olga',
          currency_code: 'EUR',
          total_shipping_value: 100,
          order_rows: [{ product_name: 'Kayak', price_value: 100, quantity: 1 }],
        },
      ],
    }),
  ]);
  acme = seeded.acme as SeededMerchant;
  other = seeded.other as SeededMerchant;
});

const theirs = () => api('live', other.tokens.live);

type Row = {
  route: string;
  method: 'get' | 'post' | 'patch';
  path: () => string;
  body?: unknown;
  /** What the owner still sees afterwards. */
  unchanged: () => Promise<void>;
};

const order = () => `/api/v2/orders/${other.orders.theirs}`;
const request = () => `/api/v2/affiliate-requests/${other.affiliate_requests.theirs}`;
const orderAsBefore = async () => {
  const { body } = await theirs().get(order());
  expect(body.data.order).toMatchObject({ total_shipping_value: 100, cancelled_at: null });
};
const requestStillPending = async () => {
  expect((await theirs().get(request())).body.data.affiliate_request.status).toBe('pending');
  expect((await theirs().get('/api/v2/affiliates/zed')).status).toBe(404);
  expect(await mailsTo(OTHER_EMAIL)).toEqual([]);
};
const visibleToOwner = (path: () => string) => async () => {
  expect((await theirs().get(path())).status).toBe(200);
};

const ROWS: Row[] = [
  { route: 'orders-get', method: 'get', path: order, unchanged: orderAsBefore },
  { route: 'orders-update', method: 'patch', path: order, body: { total_shipping_value: 1 }, unchanged: orderAsBefore },
  { route: 'orders-cancel', method: 'post', path: () => `${order()}/cancel`, unchanged: orderAsBefore },
  {
    route: 'affiliates-get',
    method: 'get',
    path: () => '/api/v2/affiliates/olga',
    unchanged: visibleToOwner(() => '/api/v2/affiliates/olga'),
  },
  { route: 'tiers-get', method: 'get', path: () => '/api/v2/tiers/platinum', unchanged: visibleToOwner(() => '/api/v2/tiers/platinum') },
  {
    route: 'segments-get',
    method: 'get',
    path: () => `/api/v2/segments/${other.segments.theirs}`,
    unchanged: visibleToOwner(() => `/api/v2/segments/${other.segments.theirs}`),
  },
  { route: 'affiliate-requests-get', method: 'get', path: request, unchanged: requestStillPending },
  { route: 'affiliate-requests-accept', method: 'post', path: () => `${request()}/accept`, unchanged: requestStillPending },
  { route: 'affiliate-requests-decline', method: 'post', path: () => `${request()}/decline`, unchanged: requestStillPending },
];

describe("another merchant's item", () => {
  it.each(ROWS.map((row): [string, Row] => [row.route, row]))('%s answers 404 and leaves it as it was', async (_, row) => {
    // Prepare
    const client = api('live', acme.tokens.live);

    // Act
    const res = row.method === 'get' ? await client.get(row.path()) : await client[row.method](row.path(), row.body);

    // Assess
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      success: false,
      data: null,
      errors: { message: ['Not Found'] },
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
    await row.unchanged();
  });
});
