import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod/mini';
import { buildOrder, orderCountChange, orderRecord, orderUuidFor, parseOrder, putNewOrder } from '#shared/db/entities/order';
import { ORDER_MESSAGES, toOrderResponse } from '#shared/domain/order-model';
import { orderCreateBody } from '#shared/schemas/order';
import { ddbMock, resetAwsMocks } from './support/aws';
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

describe('buildOrder', () => {
  it('normalises slug and currency, gives every row a uuid and fills optional fields with null', () => {
    // Act
    const order = buildOrder(input({ affiliate_slug: 'Alice', currency_code: 'eur', customer: { email: 'dan@example.com' } }), { seq: 5 });

    // Assess
    expect(order).toEqual({
      uuid: expect.stringMatching(UUID),
      seq: 5,
      order_no: 'A-1001',
      affiliate_slug: 'alice',
      total_shipping_value: 495,
      currency_code: 'EUR',
      order_rows: [
        {
          uuid: expect.stringMatching(UUID),
          product_sku: 'TENT-2P',
          product_name: 'Tent',
          segment_slug: 'outdoor',
          price_value: 19900,
          tax_value: 3781,
          quantity: 1,
        },
        {
          uuid: expect.stringMatching(UUID),
          product_sku: null,
          product_name: 'Tent pegs',
          segment_slug: null,
          price_value: 500,
          tax_value: null,
          quantity: 4,
        },
      ],
      customer: { name: null, email: 'dan@example.com' },
      created_at: NOW,
      updated_at: NOW,
      version: 1,
    });
    expect(order.order_rows[0]?.uuid).not.toBe(order.order_rows[1]?.uuid);
  });

  it('stores no customer when none was sent', () => {
    expect(buildOrder(input({ customer: null }), { seq: 1 }).customer).toBeNull();
  });

  it('takes history fields from the seed (uuid, created_at, cancelled_at, payment_id)', () => {
    // Act
    const order = buildOrder(input(), {
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
    const order = buildOrder(input(), { seq: 1 });
    expect(order).not.toHaveProperty('cancelled_at');
    expect(order).not.toHaveProperty('payment_id');
  });
});

describe('toOrderResponse', () => {
  it('presents the order with its currency name and cancelled_at null while not cancelled', () => {
    // Prepare
    const order = buildOrder(input(), { seq: 3, uuid: '11111111-2222-4333-8444-555555555555' });

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
    const stored = {
      ...buildOrder(input(), { seq: 3, payment_id: 'pay_9' }),
      pk: 'M#x',
      sk: 'ORDER#y',
      gsi1pk: 'M#x#ORDERS',
      type: 'order',
      version: 2,
      history: true,
      last_write_id: 'w-1',
    };

    // Act
    const response = toOrderResponse(stored);

    // Assess
    expect(Object.keys(response).sort()).toEqual(
      [
        'cancelled_at',
        'created_at',
        'currency',
        'customer',
        'affiliate_slug',
        'order_no',
        'order_rows',
        'total_shipping_value',
        'updated_at',
        'uuid',
      ].sort(),
    );
  });
});

describe('the order entity', () => {
  const order = () => buildOrder(input(), { seq: 8, uuid: '11111111-2222-4333-8444-555555555555' });

  it('puts the order with its keys and list entry (no gsi2 entry: it owes nothing), on the condition that its key is new', async () => {
    // Prepare
    resetAwsMocks();
    ddbMock.on(PutCommand).resolves({});

    // Act
    const holder = await putNewOrder({ ddb: ddbMock as never, table: 't' }, 'm', order());

    // Assess
    expect(holder).toBeUndefined();
    const input = ddbMock.commandCalls(PutCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
    expect(input?.Item).toMatchObject({
      pk: 'M#m',
      sk: 'ORDER#11111111-2222-4333-8444-555555555555',
      gsi1pk: 'M#m#orders#all',
      gsi1sk: '000000000008',
      type: 'order',
      seq: 8,
    });
    expect(input?.Item).not.toHaveProperty('gsi2pk');
    expect(input?.Item).not.toHaveProperty('history');
  });

  it('hands back the order that holds the key when the put is refused, so the caller tells its own applied attempt from another order', async () => {
    // Prepare
    resetAwsMocks();
    const stored = orderRecord('m', { ...order(), last_write_id: 'w-1' }, { history: false });
    ddbMock
      .on(PutCommand)
      .rejects(new ConditionalCheckFailedException({ message: 'taken', $metadata: {}, Item: marshall(stored) as never }));

    // Act
    const holder = await putNewOrder({ ddb: ddbMock as never, table: 't' }, 'm', order());

    // Assess
    expect(holder?.last_write_id).toBe('w-1');
    expect(holder?.uuid).toBe(order().uuid);
  });

  it("derives an order's uuid from its merchant and order_no: the same for a retry, another for another merchant or order_no", () => {
    // Act and assess
    expect(orderUuidFor('m', 'A-1')).toBe(orderUuidFor('m', 'A-1'));
    expect(orderUuidFor('m', 'A-1')).not.toBe(orderUuidFor('n', 'A-1'));
    expect(orderUuidFor('m', 'A-1')).not.toBe(orderUuidFor('m', 'a-1'));
    expect(orderUuidFor('m', 'A-1')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('marks an imported order as history (the change feed announces none), and a created one not', () => {
    // Act
    const created = orderRecord('m', order(), { history: false });
    const imported = orderRecord('m', order(), { history: true });

    // Assess
    expect(created).not.toHaveProperty('history');
    expect(imported).toMatchObject({ history: true });
    expect(created).not.toHaveProperty('gsi2pk');
  });

  it('counts a committed order +1 in the `all` bucket of the orders list at its sequence number', () => {
    expect(orderCountChange(order())).toEqual({ list: 'orders', bucket: 'all', seq: 8, delta: 1 });
  });

  it('parses a stored item back to the order, keys and index attributes aside', () => {
    // Prepare
    const built = order();

    // Act
    const parsed = parseOrder(orderRecord('m', built, { history: false }));

    // Assess
    expect(parsed).toEqual(built);
    expect(parsed.seq).toBe(8);
    expect(parseOrder(orderRecord('m', built, { history: true })).history).toBe(true);
  });

  it('refuses a stored item without the order shape, naming the fields', () => {
    // Prepare
    const { seq: _seq, ...withoutSeq } = orderRecord('m', order(), { history: true });

    // Act
    const parse = () => parseOrder({ ...withoutSeq, total_shipping_value: '495' });

    // Assess
    expect(parse).toThrow(/Stored order item is malformed at seq, total_shipping_value/);
  });
});

describe('ORDER_MESSAGES', () => {
  it('names the merchant currency in the mismatch message', () => {
    expect(ORDER_MESSAGES.currencyMismatch('SEK')).toBe('The currency code must match the merchant account currency (SEK).');
  });
});
