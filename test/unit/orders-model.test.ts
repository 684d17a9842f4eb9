import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildOrderItem, ORDER_MESSAGES, orderTransactItems, toOrderResponse } from '../../shared/domain/order-model';
import { orderCreateBody } from '../../shared/schemas/order';
import * as z from 'zod/mini';
import { orderBody, UUID } from './support/fixtures';

const NOW = '2026-03-10T09:00:00.000Z';
const input = (overrides: Parameters<typeof orderBody>[0] = {}) => z.parse(orderCreateBody, orderBody(overrides));

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(NOW));
});

afterEach(() => {
  vi.useRealTimers();
});

describe('buildOrderItem', () => {
  it('normalises slug and currency, gives every row a uuid and fills optional fields with null', () => {
    // Act
    const order = buildOrderItem(input({ affiliate_slug: 'Alice', currency_code: 'eur', customer: { email: 'dan@example.com' } }), { seq: 5 });

    // Assess
    expect(order).toEqual({
      uuid: expect.stringMatching(UUID),
      seq: 5,
      order_no: 'A-1001',
      affiliate_slug: 'alice',
      total_shipping_value: 495,
      currency_code: 'EUR',
      order_rows: [
        { uuid: expect.stringMatching(UUID), product_sku: 'TENT-2P', product_name: 'Tent', segment_slug: 'outdoor', price_value: 19900, tax_value: 3781, quantity: 1 },
        { uuid: expect.stringMatching(UUID), product_sku: null, product_name: 'Tent pegs', segment_slug: null, price_value: 500, tax_value: null, quantity: 4 },
      ],
      customer: { name: null, email: 'dan@example.com' },
      created_at: NOW,
      updated_at: NOW,
    });
    expect(order.order_rows[0]?.uuid).not.toBe(order.order_rows[1]?.uuid);
  });

  it('stores no customer when none was sent', () => {
    expect(buildOrderItem(input({ customer: null }), { seq: 1 }).customer).toBeNull();
  });

  it('takes history fields from the seed (uuid, created_at, cancelled_at, payment_id)', () => {
    // Act
    const order = buildOrderItem(input(), {
      seq: 2,
      uuid: '11111111-2222-4333-8444-555555555555',
      created_at: '2026-01-05T10:00:00.000Z',
      cancelled_at: '2026-01-06T10:00:00.000Z',
      payment_id: 'pay_1',
    });

    // Assess
    expect(order).toMatchObject({
      uuid: '11111111-2222-4333-8444-555555555555',
      created_at: '2026-01-05T10:00:00.000Z',
      updated_at: '2026-01-05T10:00:00.000Z',
      cancelled_at: '2026-01-06T10:00:00.000Z',
      payment_id: 'pay_1',
    });
  });

  it('leaves cancelled_at and payment_id out of a new order', () => {
    const order = buildOrderItem(input(), { seq: 1 });
    expect(order).not.toHaveProperty('cancelled_at');
    expect(order).not.toHaveProperty('payment_id');
  });
});

describe('toOrderResponse', () => {
  it('presents the order with its currency name and cancelled_at null while not cancelled', () => {
    // Prepare
    const order = buildOrderItem(input(), { seq: 3, uuid: '11111111-2222-4333-8444-555555555555' });

    // Act
    const response = toOrderResponse(order);

    // Assess
    expect(response).toMatchObject({
      uuid: '11111111-2222-4333-8444-555555555555',
      order_no: 'A-1001',
      currency: { code: 'EUR', name: 'Euro' },
      customer: { name: 'Dan Customer', email: 'Dan@Example.com' },
      cancelled_at: null,
    });
    expect(response).not.toHaveProperty('seq');
    expect(response).not.toHaveProperty('currency_code');
  });

  it('does not expose storage attributes of the stored item', () => {
    // Prepare
    const stored = { ...buildOrderItem(input(), { seq: 3, payment_id: 'pay_9' }), pk: 'M#x', sk: 'ORDER#y', gsi1pk: 'M#x#ORDERS', gsi2pk: 'OUTBOX', type: 'order' };

    // Act
    const response = toOrderResponse(stored);

    // Assess
    expect(Object.keys(response).sort()).toEqual(
      ['cancelled_at', 'created_at', 'currency', 'customer', 'affiliate_slug', 'order_no', 'order_rows', 'total_shipping_value', 'updated_at', 'uuid'].sort(),
    );
  });
});

describe('orderTransactItems', () => {
  const order = () => buildOrderItem(input(), { seq: 8, uuid: '11111111-2222-4333-8444-555555555555' });

  it('keeps the fixed positions CancellationReasons rely on', () => {
    // Act
    const items = orderTransactItems('t', 'm', order(), 7, { pending: true });

    // Assess
    expect(items.map((item) => Object.keys(item)[0])).toEqual(['ConditionCheck', 'Put', 'Update', 'Put', 'Update']);
    expect(items[0]).toMatchObject({ ConditionCheck: { Key: { pk: 'M#m', sk: 'AFFILIATE#alice' } } });
    expect(items[1]).toMatchObject({ Put: { Item: { sk: 'ORDER_NO#A-1001' } } });
    expect(items[2]).toMatchObject({ Update: { Key: { pk: 'M#m', sk: 'MERCHANT' } } });
    expect(items[3]).toMatchObject({ Put: { Item: { sk: 'ORDER#11111111-2222-4333-8444-555555555555' } } });
  });

  it('marks the order pending in the outbox only when asked', () => {
    // Act
    const pending = orderTransactItems('t', 'm', order(), 7, { pending: true })[3];
    const settled = orderTransactItems('t', 'm', order(), 7, { pending: false })[3];

    // Assess
    expect(pending).toMatchObject({ Put: { Item: { gsi2pk: 'OUTBOX', gsi2sk: NOW } } });
    expect(settled?.Put?.Item).toBeDefined();
    expect(settled?.Put?.Item).not.toHaveProperty('gsi2pk');
  });

  it('for the seed, only asks that the affiliate exists (history may name an inactive one)', () => {
    // Act
    const [check] = orderTransactItems('t', 'm', order(), 7, { pending: false, checkAffiliate: false });

    // Assess
    expect(check).toEqual({ ConditionCheck: { TableName: 't', Key: { pk: 'M#m', sk: 'AFFILIATE#alice' }, ConditionExpression: 'attribute_exists(pk)' } });
  });

  it('upserts the customer without overwriting its first name and e-mail', () => {
    // Act
    const customer = orderTransactItems('t', 'm', order(), 7, { pending: true })[4];

    // Assess
    expect(customer).toMatchObject({
      Update: {
        Key: { pk: 'M#m', sk: 'CUSTOMER#dan@example.com' },
        UpdateExpression: expect.stringContaining('email = if_not_exists(email, :email)'),
      },
    });
    expect(customer?.Update?.UpdateExpression).toContain('#name = if_not_exists(#name, :name)');
  });
});

describe('ORDER_MESSAGES', () => {
  it('names the merchant currency in the mismatch message', () => {
    expect(ORDER_MESSAGES.currencyMismatch('SEK')).toBe('The currency code must match the merchant account currency (SEK).');
  });
});
