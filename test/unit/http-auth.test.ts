import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler as createV2 } from '#functions/orders/create';
import { handler as createLegacy } from '#functions/orders/create-legacy';
import { handler as getOrderHandler } from '#functions/orders/get';
import { handler as listOrders } from '#functions/orders/list';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { ddbMock, resetAwsMocks, sqsMock } from './support/aws';
import {
  MERCHANT,
  MERCHANT_KEY,
  MERCHANT_PK,
  ORDER_UUID,
  orderBody,
  sha256,
  storedOrder,
  stubAuth,
  stubOrderCreate,
  TOKENS,
} from './support/fixtures';

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
  stubOrderCreate();
  ddbMock.on(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${ORDER_UUID}` } }).resolves({ Item: storedOrder() });
});

describe('bearer token authentication', () => {
  it('resolves the token by its SHA-256 hash on gsi1, then reads the merchant', async () => {
    // Act
    const response = await invoke(getOrderHandler, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(ddbMock).toHaveReceivedNthCommandWith(QueryCommand, 1, {
      TableName: 'unit-table',
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
      ExpressionAttributeValues: { ':pk': `TOKEN#${sha256(TOKENS.live)}`, ':sk': 'TOKEN' },
    });
    expect(ddbMock).toHaveReceivedNthCommandWith(GetCommand, 1, { TableName: 'unit-table', Key: MERCHANT_KEY });
    // The raw token never reaches the table.
    expect(JSON.stringify(ddbMock.calls().map((call) => call.args[0].input))).not.toContain(TOKENS.live);
  });

  it('accepts the header in any casing and the scheme in any casing', async () => {
    // Act
    const response = await invoke(
      getOrderHandler,
      apiEvent('orders-get', { token: null, headers: { authorization: `bearer ${TOKENS.live}` }, pathParameters: { uuid: ORDER_UUID } }),
    );

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.order.uuid).toBe(ORDER_UUID);
  });

  it('answers 401 in the V2 envelope without an Authorization header, before any table read', async () => {
    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: null, body: orderBody() }));

    // Assess
    expectV2Error(response, 401, { message: ['Unauthenticated.'] });
    expect(ddbMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 401 {message} on the legacy route without an Authorization header', async () => {
    // Act
    const response = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: null, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(401);
    expect(response.body).toEqual({ message: 'Unauthenticated.' });
    expect(ddbMock).not.toHaveReceivedAnyCommand();
  });

  it.each([
    ['a token without a kind prefix', 'Bearer abcdefabcdefabcdefabcdefabcdefabcdefabcd'],
    ['another scheme', `Basic ${TOKENS.live}`],
    ['an empty bearer', 'Bearer '],
  ])('answers 401 to %s, before any table read', async (_, header) => {
    // Act
    const response = await invoke(listOrders, apiEvent('orders-list', { token: null, headers: { Authorization: header } }));

    // Assess
    expectV2Error(response, 401, { message: ['Unauthenticated.'] });
    expect(ddbMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 401 to an unknown token of the right kind', async () => {
    // Act
    const response = await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.unknown }));

    // Assess
    expectV2Error(response, 401, { message: ['Unauthenticated.'] });
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 1);
    expect(ddbMock).not.toHaveReceivedCommand(GetCommand);
  });

  it('answers 401 to a revoked token without reading its merchant', async () => {
    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.revoked, body: orderBody() }));

    // Assess
    expectV2Error(response, 401, { message: ['Unauthenticated.'] });
    expect(ddbMock).not.toHaveReceivedCommand(GetCommand);
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('answers 401 on the legacy route to a revoked token', async () => {
    // Act
    const response = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.revoked, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(401);
    expect(response.body).toEqual({ message: 'Unauthenticated.' });
  });

  it('answers 401 to a token whose merchant no longer exists', async () => {
    // Act
    const response = await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.orphan }));

    // Assess
    expectV2Error(response, 401, { message: ['Unauthenticated.'] });
  });

  it('answers 403 to a testing token on the live API before any table read', async () => {
    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.testing, body: orderBody() }));

    // Assess
    expectV2Error(response, 403, { message: ['A testing token cannot be used on the live API.'] });
    expect(ddbMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 403 in the legacy envelope to a testing token on the live legacy API', async () => {
    // Act
    const response = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.testing, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(403);
    expect(response.body).toEqual({ success: false, message: 'A testing token cannot be used on the live API.', data: [] });
    expect(ddbMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 403 on V2 create to a live token that may not place live orders; nothing is written or queued', async () => {
    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.noLiveOrders, body: orderBody() }));

    // Assess
    expectV2Error(response, 403, { message: ['This token is not allowed to place live orders.'] });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 403 in the legacy envelope on legacy create to a live token that may not place live orders', async () => {
    // Act
    const response = await invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.noLiveOrders, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(403);
    expect(response.body).toEqual({ success: false, message: 'This token is not allowed to place live orders.', data: [] });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('lets a live token that may not place live orders read orders', async () => {
    // Act
    const list = await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.noLiveOrders }));
    const one = await invoke(getOrderHandler, apiEvent('orders-get', { token: TOKENS.noLiveOrders, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expect(list.statusCode).toBe(200);
    expect(one.statusCode).toBe(200);
    expect(one.body.data.order.order_no).toBe('A-1');
  });

  it('authenticates before reading the body: a malformed body from an unauthenticated caller is a 401', async () => {
    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: null, rawBody: '{not json' }));

    // Assess
    expect(response.statusCode).toBe(401);
  });

  it('scopes every read to the token merchant partition', async () => {
    // Act
    await invoke(getOrderHandler, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: { pk: `M#${MERCHANT.id}`, sk: `ORDER#${ORDER_UUID}` } });
  });

  it('with AUTH_CACHE_TTL_SECONDS=0, looks the token up again on every request (revocation is immediate)', async () => {
    // Act
    await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.live }));
    await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.live }));

    // Assess
    expect(ddbMock.commandCalls(QueryCommand, { KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk' })).toHaveLength(2);
  });
});
