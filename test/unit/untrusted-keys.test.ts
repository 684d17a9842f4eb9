import { QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { handler as listAffiliateRequests } from '#functions/affiliate-requests/list';
import { handler as createInvite } from '#functions/invites/create';
import { handler as createOrder } from '#functions/orders/create';
import { handler as createLegacy } from '#functions/orders/create-legacy';
import { handler as listOrders } from '#functions/orders/list';
import { handler as updateOrder } from '#functions/orders/update';
import { orderUpdateBody } from '#shared/schemas/order';
import { laravelErrors } from '#shared/validation/messages';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';
import {
  ORDER_UUID,
  orderBody,
  storedOrder,
  stubAuth,
  stubBlockCounts,
  stubOrderCreate,
  stubOrderSequence,
  TOKENS,
} from './support/fixtures';

/**
 * Keys named like Object.prototype members (`constructor`, `__proto__`, `toString`,
 * `hasOwnProperty`) are ordinary data to the API: a prohibited one is reported like any other, an
 * unknown one is ignored, and none reaches an inherited property or a prototype.
 */
const PROTOTYPE_KEYS = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

/** A JSON object text with `key` as an own key (JSON.stringify of a literal cannot make `__proto__` one). */
const jsonWith = (base: Record<string, unknown>, key: string, value: unknown) =>
  `${JSON.stringify(base).slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value)}}`;

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
  stubOrderCreate();
  ddbMock.on(TransactWriteCommand).resolves({});
  ddbMock.on(UpdateCommand).resolves({ Attributes: storedOrder({ total_shipping_value: 5 }) });
  stubOrderSequence();
});

describe('PATCH /api/v2/orders/{uuid} with a prototype-named key', () => {
  it.each(PROTOTYPE_KEYS)('answers 422 "The … field is prohibited." for %s and changes nothing', async (key) => {
    // Act
    const response = await invoke(
      updateOrder,
      apiEvent('orders-update', {
        token: TOKENS.live,
        pathParameters: { uuid: ORDER_UUID },
        rawBody: jsonWith({ total_shipping_value: 5 }, key, 1),
      }),
    );

    // Assess
    expectV2Error(response, 422, { [key]: [`The ${key === '__proto__' ? 'proto' : key} field is prohibited.`] });
    expect(Object.keys(response.body.errors)).toEqual([key]);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('reports a prototype-named key next to a bad field', async () => {
    // Act
    const response = await invoke(
      updateOrder,
      apiEvent('orders-update', {
        token: TOKENS.live,
        pathParameters: { uuid: ORDER_UUID },
        rawBody: jsonWith({ total_shipping_value: -1 }, '__proto__', { x: 1 }),
      }),
    );

    // Assess
    expect(response.statusCode).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['total_shipping_value', '__proto__']);
    expect(response.body.errors).toEqual(
      JSON.parse(
        '{"total_shipping_value":["The total shipping value field must be at least 0."],"__proto__":["The proto field is prohibited."]}',
      ),
    );
  });
});

describe('order creation with prototype-named keys', () => {
  it.each(PROTOTYPE_KEYS)('ignores an unknown top-level or row key %s, like any unknown field (201)', async (key) => {
    // Prepare
    const body = orderBody();
    const row = jsonWith(body.order_rows[0] as Record<string, unknown>, key, 'x');
    const raw = `${jsonWith({ ...body, order_rows: [] }, key, { polluted: true }).replace('"order_rows":[]', `"order_rows":[${row}]`)}`;

    // Act
    const v2 = await invoke(createOrder, apiEvent('orders-create', { token: TOKENS.live, rawBody: raw }));
    const legacy = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, rawBody: raw }));

    // Assess
    expect(v2.statusCode).toBe(201);
    expect(legacy.statusCode).toBe(201);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('never reads a required field through a prototype-named key: a customer whose e-mail sits under __proto__ has none', async () => {
    // Prepare
    const raw = JSON.stringify({ ...orderBody(), customer: 'CUSTOMER' }).replace(
      '"CUSTOMER"',
      '{"name":"Dan","__proto__":{"email":"dan@example.com"}}',
    );

    // Act
    const response = await invoke(createOrder, apiEvent('orders-create', { token: TOKENS.live, rawBody: raw }));

    // Assess
    expectV2Error(response, 422, { 'customer.email': ['The customer.email field is required.'] });
  });

  it('reports a missing field of a body that also carries hasOwnProperty and constructor', async () => {
    // Prepare
    const { order_no: _omitted, ...body } = orderBody();
    const raw = jsonWith(jsonWithObject(body, 'hasOwnProperty', 1), 'constructor', 'x');

    // Act
    const response = await invoke(createOrder, apiEvent('orders-create', { token: TOKENS.live, rawBody: raw }));

    // Assess
    expectV2Error(response, 422, { order_no: ['The order no field is required.'] });
  });
});

/** `base` with one more own key (for a key JSON.stringify handles: not `__proto__`). */
const jsonWithObject = (base: Record<string, unknown>, key: string, value: unknown) => ({ ...base, [key]: value });

describe('invite creation with prototype-named keys', () => {
  it.each(PROTOTYPE_KEYS)('names the missing e-mail, not %s', async (key) => {
    // Act
    const response = await invoke(
      createInvite,
      apiEvent('invites-create', { token: TOKENS.live, rawBody: jsonWith({ sender_email: 'owner@acme.example' }, key, 'x') }),
    );

    // Assess
    expectV2Error(response, 422, { email: ['The email field is required.'] });
  });
});

describe('list queries with prototype-named parameters', () => {
  beforeEach(() => {
    stubBlockCounts('orders#all', { 0: 3 });
    ddbMock
      .on(QueryCommand, { IndexName: 'gsi1', KeyConditionExpression: '#pk = :pk AND #sk <= :top' })
      .resolves({ Items: [storedOrder({ seq: 3 })] });
  });

  it('ignores them and keeps them in the pagination links', async () => {
    // Prepare
    const query = Object.fromEntries([...PROTOTYPE_KEYS.map((key) => [key, '1']), ['per_page', '1']]);

    // Act
    const response = await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.live, query }));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.meta.pagination).toMatchObject({ current_page: 1, per_page: 1, total: 3 });
    const next = new URL(response.body.meta.pagination.next_page_url as string);
    for (const key of PROTOTYPE_KEYS) expect(next.searchParams.get(key)).toBe('1');
    expect(next.searchParams.get('page')).toBe('2');
  });

  it('still reports a bad page next to them', async () => {
    // Act
    const response = await invoke(
      listOrders,
      apiEvent('orders-list', {
        token: TOKENS.live,
        query: Object.fromEntries([
          ['__proto__', 'x'],
          ['constructor', 'y'],
          ['page', 'zero'],
        ]),
      }),
    );

    // Assess
    expectV2Error(response, 422, { page: ['The page field must be an integer.'] });
  });

  it.each(PROTOTYPE_KEYS)('refuses %s as an affiliate-request status', async (status) => {
    // Act
    const response = await invoke(listAffiliateRequests, apiEvent('affiliate-requests-list', { token: TOKENS.live, query: { status } }));

    // Assess
    expectV2Error(response, 422, { status: ['The selected status is invalid.'] });
  });
});

describe('laravelErrors', () => {
  it('returns errors that are own keys only, whatever the field names', () => {
    // Prepare
    const input = JSON.parse('{"total_shipping_value":"x","__proto__":1,"constructor":1,"toString":1}');
    const result = z.safeParse(orderUpdateBody, input);
    if (result.success) throw new Error('expected the input to be invalid');

    // Act
    const errors = laravelErrors(result.error.issues, input);

    // Assess
    expect(Object.getPrototypeOf(errors)).toBe(Object.prototype);
    expect(Object.keys(errors).sort()).toEqual(['__proto__', 'constructor', 'toString', 'total_shipping_value']);
    expect(JSON.parse(JSON.stringify(errors))).toEqual(
      JSON.parse(
        '{"total_shipping_value":["The total shipping value field must be an integer."],"__proto__":["The proto field is prohibited."],"constructor":["The constructor field is prohibited."],"toString":["The toString field is prohibited."]}',
      ),
    );
  });

  it('names an unknown type through its own table only', () => {
    // Act
    const errors = laravelErrors([{ code: 'invalid_type', expected: 'constructor', path: ['a'], message: 'x' }], { a: 1 });

    // Assess
    expect(errors).toEqual({ a: ['The a field must be of type constructor.'] });
  });
});
