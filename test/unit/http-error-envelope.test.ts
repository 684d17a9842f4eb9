import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as cancelOrder } from '#functions/orders/cancel';
import { handler as createV2 } from '#functions/orders/create';
import { handler as createLegacy } from '#functions/orders/create-legacy';
import { handler as getOrder } from '#functions/orders/get';
import { handler as listOrders } from '#functions/orders/list';
import { handler as updateOrder } from '#functions/orders/update';
import { logger } from '#shared/logger';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { connectionRefused, ddbMock, resetAwsMocks, serviceUnavailable, sqsMock } from './support/aws';
import {
  MERCHANT_PK,
  ORDER_PUT,
  ORDER_UUID,
  orderBody,
  orderPuts,
  storedOrder,
  stubAuth,
  stubOrderCreate,
  TOKENS,
  TRACE_ID,
} from './support/fixtures';

const ORDER_KEY = { pk: MERCHANT_PK, sk: `ORDER#${ORDER_UUID}` };
const INTERNALS = 'AccessDeniedException: User arn:aws:sts::123456789012:assumed-role/unit is not authorized on table unit-table';

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
  stubOrderCreate();
  ddbMock.on(GetCommand, { Key: ORDER_KEY }).resolves({ Item: storedOrder() });
  ddbMock.on(UpdateCommand, { Key: ORDER_KEY }).resolves({ Attributes: storedOrder() });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('unexpected errors', () => {
  it('become a V2 500 with the generic "Server Error" and no internals', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).rejects(new Error(INTERNALS));

    // Act
    const response = await invoke(getOrder, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expect(response.statusCode).toBe(500);
    expect(response.headers).toMatchObject({ 'content-type': 'application/json' });
    expect(response.body).toEqual({
      success: false,
      data: null,
      errors: { message: ['Server Error'] },
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
    expect(response.raw).not.toMatch(/arn:aws|AccessDenied|unit-table|stack|at /);
  });

  it('become a legacy 500 {success:false, message:"Server Error", data:[]} on the legacy route', async () => {
    // Prepare
    ddbMock.on(PutCommand, ORDER_PUT).rejects(new Error(INTERNALS));

    // Act
    const response = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(500);
    expect(response.body).toEqual({ success: false, message: 'Server Error', data: [] });
    expect(response.raw).not.toContain('arn:aws');
  });

  it.each(['TimeoutError', 'ThrottlingException', 'ProvisionedThroughputExceededException'])(
    'are a 503 with Retry-After when a dependency failed transiently (%s), in either envelope',
    async (name) => {
      // Prepare
      ddbMock.on(GetCommand, { Key: ORDER_KEY }).rejects(Object.assign(new Error(INTERNALS), { name }));
      ddbMock.on(PutCommand, ORDER_PUT).rejects(Object.assign(new Error(INTERNALS), { name }));

      // Act
      const v2 = await invoke(getOrder, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));
      const legacy = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, body: orderBody() }));

      // Assess
      expect(v2.statusCode).toBe(503);
      expect(v2.headers).toMatchObject({ 'retry-after': '1' });
      expect(v2.body).toMatchObject({
        success: false,
        data: null,
        errors: { message: ['The service is busy. Please retry the request.'] },
      });
      expect(legacy.statusCode).toBe(503);
      expect(legacy.body).toEqual({ success: false, message: 'The service is busy. Please retry the request.', data: [] });
      expect(v2.raw).not.toContain(INTERNALS);
    },
  );

  it.each([
    ['a refused connection (a plain Error with code ECONNREFUSED)', connectionRefused],
    ['a 503 answer of the service', () => serviceUnavailable(503)],
    ['a 500 InternalServerError', () => serviceUnavailable(500)],
  ])('are a 503 with Retry-After, not a 500, when DynamoDB is unavailable (%s), in either envelope', async (_label, failure) => {
    // Prepare
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).rejects(failure());
    ddbMock.on(PutCommand, ORDER_PUT).rejects(failure());

    // Act
    const v2 = await invoke(getOrder, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));
    const legacy = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, body: orderBody() }));

    // Assess
    expectV2Error(v2, 503, { message: ['The service is busy. Please retry the request.'] });
    expect(v2.headers).toMatchObject({ 'content-type': 'application/json', 'retry-after': '1' });
    expect(legacy.statusCode).toBe(503);
    expect(legacy.headers).toMatchObject({ 'content-type': 'application/json', 'retry-after': '1' });
    expect(legacy.body).toEqual({ success: false, message: 'The service is busy. Please retry the request.', data: [] });
    expect(orderPuts()).toHaveLength(1);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('are a 503 when authentication cannot reach DynamoDB (ECONNREFUSED), not a 401 or a 500', async () => {
    // Prepare
    ddbMock.on(QueryCommand).rejects(connectionRefused());

    // Act
    const response = await invoke(getOrder, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expectV2Error(response, 503, { message: ['The service is busy. Please retry the request.'] });
    expect(response.headers).toMatchObject({ 'retry-after': '1' });
  });

  it('are logged with their details for the operator', async () => {
    // Prepare
    const logged = vi.spyOn(logger, 'error');
    const failure = new Error(INTERNALS);
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).rejects(failure);

    // Act
    await invoke(getOrder, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expect(logged).toHaveBeenCalledWith('Unhandled error', failure);
  });
});

describe('malformed JSON', () => {
  it('is a V2 422, never a 500', async () => {
    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, rawBody: '{"order_no": "A-1",' }));

    // Assess
    expectV2Error(response, 422, { message: ['The request body must be valid JSON.'] });
    expect(ddbMock).not.toHaveReceivedCommand(PutCommand);
  });

  it('is a legacy 422 with data.errors on the legacy route', async () => {
    // Act
    const response = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, rawBody: 'order_no=A-1' }));

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body).toEqual({
      success: false,
      message: 'The given data was invalid.',
      data: { errors: { message: ['The request body must be valid JSON.'] } },
    });
  });

  it('a JSON body that is not an object is a 422 about the body as a whole', async () => {
    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: [orderBody()] }));

    // Assess
    expectV2Error(response, 422, { message: ['The request body must be a JSON object.'] });
  });

  it('a base64-encoded body (binary media types) is decoded before parsing', async () => {
    // Act
    const response = await invoke(
      createV2,
      apiEvent('orders-create', {
        token: TOKENS.live,
        rawBody: Buffer.from(JSON.stringify(orderBody())).toString('base64'),
        isBase64Encoded: true,
      }),
    );

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.body.data.order.order_no).toBe('A-1001');
  });
});

describe('meta.trace_id', () => {
  const requests = {
    '201 create': () => invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() })),
    '200 list': () => invoke(listOrders, apiEvent('orders-list', { token: TOKENS.live })),
    '200 get': () => invoke(getOrder, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } })),
    '200 update': () =>
      invoke(
        updateOrder,
        apiEvent('orders-update', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID }, body: { total_shipping_value: 1 } }),
      ),
    '200 cancel': () => invoke(cancelOrder, apiEvent('orders-cancel', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } })),
    '401': () => invoke(listOrders, apiEvent('orders-list', { token: null })),
    '403': () => invoke(listOrders, apiEvent('orders-list', { token: TOKENS.testing })),
    '404': () => invoke(getOrder, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: 'x' } })),
    '422': () => invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: {} })),
  };

  it.each(Object.entries(requests))('is on the %s V2 response, in the form <UTC date-time>:api:<8 hex>', async (label, request) => {
    // Act
    const response = await request();

    // Assess
    expect(String(response.statusCode)).toBe(label.split(' ')[0]);
    expect(response.body.meta.trace_id).toMatch(TRACE_ID);
  });

  it('is different for every request and carries the current UTC time', async () => {
    // Prepare
    const before = new Date(Math.floor(Date.now() / 1000) * 1000);

    // Act
    const first = await requests['200 list']();
    const second = await requests['200 list']();

    // Assess
    expect(first.body.meta.trace_id).not.toBe(second.body.meta.trace_id);
    const stamped = new Date(first.body.meta.trace_id.split(':api:')[0]);
    expect(stamped.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(stamped.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('is not part of the legacy envelope', async () => {
    // Act
    const response = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'message', 'success']);
  });
});
