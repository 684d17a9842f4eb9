import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler as getOrder } from '#functions/orders/get';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT_PK, ORDER_UUID, storedOrder, stubAuth, TOKENS, TRACE_ID } from './support/fixtures';

const get = (uuid: string) => invoke(getOrder, apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid } }));

const ORDER_KEY = { pk: MERCHANT_PK, sk: `ORDER#${ORDER_UUID}` };

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
});

describe('GET /api/v2/orders/{uuid}', () => {
  it('ignores a body, even one that is not JSON: a GET takes none', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).resolves({ Item: storedOrder() });

    // Act
    const response = await invoke(
      getOrder,
      apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID }, rawBody: '{bad' }),
    );

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.order.uuid).toBe(ORDER_UUID);
  });

  it('answers 200 with the full order, read with one consistent GetItem under the merchant partition (found right after its 201)', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).resolves({ Item: storedOrder({ cancelled_at: '2026-03-02T08:00:00.000Z' }) });

    // Act
    const response = await get(ORDER_UUID);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body).toEqual({
      success: true,
      data: {
        order: expect.objectContaining({
          uuid: ORDER_UUID,
          order_no: 'A-1',
          currency: { code: 'EUR', name: 'Euro' },
          customer: { name: 'Dan Customer', email: 'dan@example.com' },
          cancelled_at: '2026-03-02T08:00:00.000Z',
        }),
      },
      errors: null,
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { TableName: 'unit-table', Key: ORDER_KEY, ConsistentRead: true });
  });

  it('answers 404 when the order is missing or belongs to another merchant (it is not under this partition)', async () => {
    // Act
    const response = await get(ORDER_UUID);

    // Assess
    expectV2Error(response, 404, { message: ['Not Found'] });
  });

  it.each(['not-a-uuid', '123', `${ORDER_UUID}x`])('answers 404 to the non-UUID path %s without reading any order', async (uuid) => {
    // Act
    const response = await get(uuid);

    // Assess
    expectV2Error(response, 404, { message: ['Not Found'] });
    expect(ddbMock.commandCalls(GetCommand).map((call) => call.args[0].input.Key?.sk)).toEqual(['MERCHANT']);
  });
});
