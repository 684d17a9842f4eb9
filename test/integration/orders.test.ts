import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, drainQueue, eventually, merchantFixture, orderBody, seed, seedOne, stack, storeFor, TRACE_ID } from './helpers';

const monthsAgo = (months: number, extraDays = 0) => {
  const date = new Date();
  date.setUTCMonth(date.getUTCMonth() - months);
  date.setUTCDate(date.getUTCDate() - extraDays);
  return date.toISOString();
};

let acme: SeededMerchant;

beforeAll(async () => {
  const seeded = await seed([
    merchantFixture({
      key: 'acme',
      orders: [
        {
          key: 'recent',
          order_no: 'R-1',
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 0,
          order_rows: [{ product_name: 'Tent', price_value: 100, quantity: 1 }],
        },
        {
          key: 'old',
          created_at: monthsAgo(1, 2),
          order_no: 'OLD-1',
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 0,
          order_rows: [{ product_name: 'Tent', price_value: 100, quantity: 1 }],
        },
        {
          key: 'paid',
          payment_id: 'pay_1',
          order_no: 'PAID-1',
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 0,
          order_rows: [{ product_name: 'Tent', price_value: 100, quantity: 1 }],
        },
        {
          key: 'cancelled',
          cancelled_at: monthsAgo(0, 1),
          order_no: 'C-1',
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 0,
          order_rows: [{ product_name: 'Tent', price_value: 100, quantity: 1 }],
        },
      ],
    }),
    merchantFixture({
      key: 'other',
      affiliates: [{ slug: 'olga', name: 'Olga', email: 'olga@example.com', status: 'active' }],
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
});

const live = () => api('live', acme.tokens.live);

/** The customer items the live table holds for an e-mail (any case). */
const customerItems = async (merchantId: string, email: string) =>
  (
    await storeFor('live').ddb.send(
      new QueryCommand({
        TableName: stack.stages.live.table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
        ExpressionAttributeValues: { ':pk': `M#${merchantId}`, ':sk': `CUSTOMER#${email.toLowerCase()}` },
      }),
    )
  ).Items ?? [];

describe('POST /api/orders/create (legacy)', () => {
  it('creates an order and answers 201 in the legacy envelope', async () => {
    const body = orderBody({ affiliate_slug: 'ALICE' });
    const res = await live().post('/api/orders/create', body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      message: expect.any(String),
      data: { uuid: expect.stringMatching(/^[0-9a-f-]{36}$/), order_no: body.order_no },
    });
    const stored = await live().get(`/api/v2/orders/${res.body.data.uuid}`);
    expect(stored.body.data.order.affiliate_slug).toBe('alice');
  });

  it('answers 401 {message} without a token or with an unknown one', async () => {
    for (const token of [undefined, 'live_unknownunknownunknownunknownunknown00', 'garbage']) {
      const res = await api('live', token).post('/api/orders/create', orderBody());
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: 'Unauthenticated.' });
    }
  });

  it('answers 403 in the legacy envelope to a token that may not place live orders', async () => {
    const res = await api('live', acme.tokens.no_orders).post('/api/orders/create', orderBody());
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, message: 'This token is not allowed to place live orders.', data: [] });
  });

  it('answers 403 in the legacy envelope to a testing token on the live API', async () => {
    const res = await api('live', acme.tokens.test).post('/api/orders/create', orderBody());
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, data: [] });
  });

  it('answers 422 with data.errors for missing fields and a duplicate order_no', async () => {
    const missing = await live().post('/api/orders/create', {});
    expect(missing.status).toBe(422);
    expect(missing.body.success).toBe(false);
    expect(missing.body.data.errors.order_no).toEqual(['The order no field is required.']);
    expect(missing.body.data.errors.affiliate_slug).toEqual(['The affiliate slug field is required.']);

    const duplicate = await live().post('/api/orders/create', orderBody({ order_no: 'R-1' }));
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.data.errors).toEqual({ order_no: ['The order no has already been taken.'] });
  });
});

describe('POST /api/v2/orders/create', () => {
  it('creates an order: 201 with data.order {uuid, order_no} and a trace id', async () => {
    const body = orderBody();
    const res = await live().post('/api/v2/orders/create', body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: { order: { uuid: expect.any(String), order_no: body.order_no } },
      errors: null,
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
  });

  it('takes an order_no of 255 characters outside the BMP, as the spec counts characters, and refuses such an affiliate_slug as unknown', async () => {
    // Prepare
    const long = '\u{1F3D5}'.repeat(255);

    // Act
    const created = await live().post('/api/v2/orders/create', orderBody({ order_no: long }));
    const read = await live().get(`/api/v2/orders/${created.body.data.order.uuid}`);
    const again = await live().post('/api/v2/orders/create', orderBody({ order_no: long }));
    const unknownAffiliate = await live().post('/api/v2/orders/create', orderBody({ affiliate_slug: long }));
    const affiliatePath = await live().get(`/api/v2/affiliates/${encodeURIComponent(long)}`);

    // Assess
    expect(created.status).toBe(201);
    expect(read.body.data.order.order_no).toBe(long);
    expect(again.body.errors).toEqual({ order_no: ['The order no has already been taken.'] });
    expect(unknownAffiliate.body.errors).toEqual({ affiliate_slug: ['The selected affiliate slug is invalid.'] });
    expect(affiliatePath.status).toBe(404);
  });

  it('finds an order by its uuid in capitals', async () => {
    // Act
    const res = await live().get(`/api/v2/orders/${acme.orders.recent?.toUpperCase()}`);

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data.order.uuid).toBe(acme.orders.recent);
  });

  it('looks the customer up by e-mail, whatever its case, and creates it once, with the name of its first order', async () => {
    // Prepare: a merchant of its own, whose event log says when the change feed has read both orders
    const shop = await seedOne(merchantFixture());
    const client = api('live', shop.tokens.live);
    const email = `Buyer-${randomUUID()}@Example.com`;

    // Act
    const first = await client.post('/api/v2/orders/create', orderBody({ customer: { name: 'First Name', email } }));
    await eventually(async () => ((await customerItems(shop.id, email)).length > 0 ? true : undefined));
    const second = await client.post('/api/v2/orders/create', orderBody({ customer: { name: 'Other Name', email: email.toLowerCase() } }));
    const logged = `evt_${second.body.data.order.uuid}_v1`;
    await eventually(async () =>
      (await client.get('/api/v2/events?limit=100')).body.data.some((event: { id: string }) => event.id === logged) ? true : undefined,
    );

    // Assess
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(await customerItems(shop.id, email)).toEqual([expect.objectContaining({ email: email.toLowerCase(), name: 'First Name' })]);
  });

  it('answers 401 in the envelope', async () => {
    const res = await api('live').post('/api/v2/orders/create', orderBody());
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      success: false,
      data: null,
      errors: { message: ['Unauthenticated.'] },
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
  });

  it('answers 403 to a testing token on live and a live token on sandbox', async () => {
    const onLive = await api('live', acme.tokens.test).post('/api/v2/orders/create', orderBody());
    expect(onLive.status).toBe(403);
    expect(onLive.body.errors.message).toEqual(['A testing token cannot be used on the live API.']);
    const onSandbox = await api('sandbox', acme.tokens.live).post('/api/v2/orders/create', orderBody());
    expect(onSandbox.status).toBe(403);
    expect(onSandbox.body.errors.message).toEqual(['A live token cannot be used on the sandbox API.']);
  });

  it('answers 422 keyed by field, nested keys included', async () => {
    const res = await live().post(
      '/api/v2/orders/create',
      orderBody({
        total_shipping_value: -1,
        currency_code: 'EURO',
        customer: { name: 'x'.repeat(256), email: 'not-an-email' },
        order_rows: [{ product_name: '', price_value: 1.5, quantity: 0, tax_value: -2 }],
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.data).toBeNull();
    expect(res.body.errors).toEqual({
      total_shipping_value: ['The total shipping value field must be at least 0.'],
      currency_code: ['The currency code field must be 3 characters.'],
      'customer.name': ['The customer.name field must not be greater than 255 characters.'],
      'customer.email': ['The customer.email field must be a valid email address.'],
      'order_rows.0.product_name': ['The order rows.0.product name field is required.'],
      'order_rows.0.price_value': ['The order rows.0.price value field must be an integer.'],
      'order_rows.0.quantity': ['The order rows.0.quantity field must be greater than 0.'],
      'order_rows.0.tax_value': ['The order rows.0.tax value field must be at least 0.'],
    });
  });

  it('requires at least one order row and an e-mail in a sent customer', async () => {
    const res = await live().post('/api/v2/orders/create', orderBody({ order_rows: [], customer: { name: 'No Mail' } }));
    expect(res.status).toBe(422);
    expect(res.body.errors.order_rows).toEqual(['The order rows field must have at least 1 items.']);
    expect(res.body.errors['customer.email']).toEqual(['The customer.email field is required.']);
  });

  it("refuses an affiliate that is unknown, inactive or another merchant's", async () => {
    for (const slug of ['nobody', 'ivan', 'olga']) {
      const res = await live().post('/api/v2/orders/create', orderBody({ affiliate_slug: slug }));
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({ affiliate_slug: ['The selected affiliate slug is invalid.'] });
    }
  });

  it("refuses a currency that does not exist or is not the merchant's", async () => {
    const unknown = await live().post('/api/v2/orders/create', orderBody({ currency_code: 'XYZ' }));
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual({ currency_code: ['The selected currency code is invalid.'] });
    const foreign = await live().post('/api/v2/orders/create', orderBody({ currency_code: 'USD' }));
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors.currency_code[0]).toContain('EUR');
  });

  it('answers malformed JSON with a 422 envelope', async () => {
    const res = await live().raw('POST', '/api/v2/orders/create', '{"order_no": ');
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ success: false, data: null, errors: { message: ['The request body must be valid JSON.'] } });
    expect(res.body.meta.trace_id).toMatch(TRACE_ID);
  });

  it('gives exactly one 201 and nine 422 to ten concurrent creates with one order_no', async () => {
    const body = orderBody();
    const results = await Promise.all(Array.from({ length: 10 }, () => live().post('/api/v2/orders/create', body)));
    expect(results.filter((res) => res.status === 201)).toHaveLength(1);
    const refused = results.filter((res) => res.status === 422);
    expect(refused).toHaveLength(9);
    for (const res of refused) expect(res.body.errors).toEqual({ order_no: ['The order no has already been taken.'] });
  });
});

describe('GET /api/v2/orders', () => {
  it("lists only the merchant's orders, newest first, with Laravel pagination", async () => {
    const fresh = await seedOne(merchantFixture({ key: 'lister' }));
    const client = api('live', fresh.tokens.live);
    const numbers: string[] = [];
    for (let index = 0; index < 5; index++) {
      const body = orderBody({ order_no: `L-${index}` });
      numbers.push(body.order_no);
      expect((await client.post('/api/v2/orders/create', body)).status).toBe(201);
    }
    const page1 = await client.get('/api/v2/orders?per_page=2');
    expect(page1.status).toBe(200);
    expect(page1.body.data.orders.map((order: { order_no: string }) => order.order_no)).toEqual(['L-4', 'L-3']);
    expect(page1.body.meta.pagination).toEqual({
      current_page: 1,
      last_page: 3,
      per_page: 2,
      total: 5,
      next_page_url: expect.stringMatching(/\/api\/v2\/orders\?per_page=2&page=2$/),
      prev_page_url: null,
    });
    const page3 = await client.get('/api/v2/orders?per_page=2&page=3');
    expect(page3.body.data.orders.map((order: { order_no: string }) => order.order_no)).toEqual(['L-0']);
    expect(page3.body.meta.pagination).toMatchObject({
      current_page: 3,
      next_page_url: null,
      prev_page_url: expect.stringMatching(/page=2$/),
    });
    const beyond = await client.get('/api/v2/orders?per_page=2&page=9');
    expect(beyond.body.data.orders).toEqual([]);
    const order = page1.body.data.orders[0];
    expect(order).toEqual({
      uuid: expect.any(String),
      order_no: 'L-4',
      affiliate_slug: 'alice',
      total_shipping_value: 495,
      currency: { code: 'EUR', name: 'Euro' },
      order_rows: [
        {
          uuid: expect.any(String),
          product_sku: 'TENT-2P',
          product_name: 'Tent',
          segment_slug: null,
          price_value: 19900,
          tax_value: 3781,
          quantity: 1,
        },
      ],
      customer: { name: 'Dan Doe', email: 'dan@example.com' },
      cancelled_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('defaults to 15 per page and validates per_page and page', async () => {
    const res = await live().get('/api/v2/orders');
    expect(res.body.meta.pagination.per_page).toBe(15);
    const bad = await live().get('/api/v2/orders?per_page=abc&page=0');
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['page', 'per_page']);
    const tooMany = await live().get('/api/v2/orders?per_page=101');
    expect(tooMany.status).toBe(422);
  });

  it('takes per_page and page in plain decimal digits only: hex and exponents are 422, never read as numbers', async () => {
    // Act
    const answer = await live().get('/api/v2/orders?per_page=0x10&page=1e2');

    // Assess
    expect([answer.status, answer.body.errors]).toEqual([
      422,
      { per_page: ['The per page field must be an integer.'], page: ['The page field must be an integer.'] },
    ]);
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get('/api/v2/orders')).status).toBe(401);
  });
});

describe('GET /api/v2/orders/{uuid}', () => {
  it('returns the order with currency, rows and customer', async () => {
    const res = await live().get(`/api/v2/orders/${acme.orders.recent}`);
    expect(res.status).toBe(200);
    expect(res.body.data.order).toMatchObject({
      uuid: acme.orders.recent,
      order_no: 'R-1',
      currency: { code: 'EUR', name: 'Euro' },
      cancelled_at: null,
    });
  });

  it("answers 404 for a missing order and a path that is not a UUID (another merchant's: tenant-isolation.test.ts)", async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await live().get(`/api/v2/orders/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.errors).toEqual({ message: ['Not Found'] });
    }
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get(`/api/v2/orders/${acme.orders.recent}`)).status).toBe(401);
  });
});

describe('PATCH /api/v2/orders/{uuid}', () => {
  it('replaces total_shipping_value and returns the full order', async () => {
    const created = await live().post('/api/v2/orders/create', orderBody());
    const res = await live().patch(`/api/v2/orders/${created.body.data.order.uuid}`, { total_shipping_value: 1234 });
    expect(res.status).toBe(200);
    expect(res.body.data.order).toMatchObject({
      uuid: created.body.data.order.uuid,
      total_shipping_value: 1234,
      order_rows: [expect.any(Object)],
    });
  });

  it('answers 422 keyed by field for a missing, negative or non-integer value, and for any other field', async () => {
    const uuid = acme.orders.recent;
    expect((await live().patch(`/api/v2/orders/${uuid}`, {})).body.errors).toEqual({
      total_shipping_value: ['The total shipping value field is required.'],
    });
    expect((await live().patch(`/api/v2/orders/${uuid}`, { total_shipping_value: -5 })).status).toBe(422);
    expect((await live().patch(`/api/v2/orders/${uuid}`, { total_shipping_value: '12' })).status).toBe(422);
    const other = await live().patch(`/api/v2/orders/${uuid}`, { total_shipping_value: 1, order_no: 'HIJACK' });
    expect(other.status).toBe(422);
    expect(other.body.errors).toEqual({ order_no: ['The order no field is prohibited.'] });
    expect((await live().get(`/api/v2/orders/${uuid}`)).body.data.order.order_no).toBe('R-1');
  });

  it('answers 404 for a missing order', async () => {
    expect((await live().patch(`/api/v2/orders/${randomUUID()}`, { total_shipping_value: 1 })).status).toBe(404);
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').patch(`/api/v2/orders/${acme.orders.recent}`, { total_shipping_value: 1 })).status).toBe(401);
  });
});

describe('POST /api/v2/orders/{uuid}/cancel', () => {
  it('cancels: 200 with cancelled_at set; a second cancel is 422', async () => {
    const created = await live().post('/api/v2/orders/create', orderBody());
    const uuid = created.body.data.order.uuid;
    const res = await live().post(`/api/v2/orders/${uuid}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.data.order.cancelled_at).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/));
    const again = await live().post(`/api/v2/orders/${uuid}/cancel`);
    expect(again.status).toBe(422);
    expect(again.body.errors).toEqual({ message: ['The order is already cancelled.'] });
  });

  it('refuses an order older than one month, one linked to a payment, and one already cancelled', async () => {
    const old = await live().post(`/api/v2/orders/${acme.orders.old}/cancel`);
    expect(old.status).toBe(422);
    expect(old.body.errors.message).toEqual(['The order is older than one month and can no longer be cancelled.']);
    const paid = await live().post(`/api/v2/orders/${acme.orders.paid}/cancel`);
    expect(paid.status).toBe(422);
    expect(paid.body.errors.message).toEqual(['The order is linked to a payment and cannot be cancelled.']);
    const cancelled = await live().post(`/api/v2/orders/${acme.orders.cancelled}/cancel`);
    expect(cancelled.body.errors.message).toEqual(['The order is already cancelled.']);
    for (const key of ['old', 'paid'] as const) {
      expect((await live().get(`/api/v2/orders/${acme.orders[key]}`)).body.data.order.cancelled_at).toBeNull();
    }
  });

  it('gives exactly one 200 to eight concurrent cancels', async () => {
    const created = await live().post('/api/v2/orders/create', orderBody());
    const uuid = created.body.data.order.uuid;
    const results = await Promise.all(Array.from({ length: 8 }, () => live().post(`/api/v2/orders/${uuid}/cancel`)));
    expect(results.filter((res) => res.status === 200)).toHaveLength(1);
    expect(results.filter((res) => res.status === 422)).toHaveLength(7);
  });

  it('answers 404 for a missing order', async () => {
    expect((await live().post(`/api/v2/orders/${randomUUID()}/cancel`)).status).toBe(404);
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').post(`/api/v2/orders/${acme.orders.recent}/cancel`)).status).toBe(401);
  });
});

describe('stages', () => {
  it('keeps sandbox orders off the live API and off the live queue', async () => {
    const sandboxMerchant = await seedOne(merchantFixture({ key: 'sbx' }), 'sandbox');
    await drainQueue(stack.stages.live.ordersQueueUrl);
    await drainQueue(stack.stages.sandbox.ordersQueueUrl);
    const created = await api('sandbox', sandboxMerchant.tokens.test).post('/api/v2/orders/create', orderBody());
    expect(created.status).toBe(201);
    const uuid = created.body.data.order.uuid;
    expect((await api('sandbox', sandboxMerchant.tokens.test).get(`/api/v2/orders/${uuid}`)).status).toBe(200);
    expect((await api('live', acme.tokens.live).get(`/api/v2/orders/${uuid}`)).status).toBe(404);
    // The sandbox stage's change feed announces it on the sandbox queue, within a moment; the live queue never sees it.
    const announced = await eventually(async () => {
      const drained = await drainQueue(stack.stages.sandbox.ordersQueueUrl);
      return drained.length > 0 ? drained : undefined;
    });
    expect(announced.map((message) => message.order_uuid)).toEqual([uuid]);
    // Other tests' live orders are announced asynchronously too, so the live queue is not empty: none of them is this one.
    const live = await drainQueue(stack.stages.live.ordersQueueUrl);
    expect(live.filter((message) => message.order_uuid === uuid || message.merchant_id === sandboxMerchant.id)).toEqual([]);
  });
});
