import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler as updateOrder } from '#functions/orders/update';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { conditionFailed, ddbMock, resetAwsMocks, sqsMock } from './support/aws';
import { MERCHANT_PK, ORDER_UUID, storedOrder, stubAuth, TOKENS, TRACE_ID, UUID } from './support/fixtures';

const patch = (body: unknown, uuid = ORDER_UUID) =>
  invoke(updateOrder, apiEvent('orders-update', { token: TOKENS.live, pathParameters: { uuid }, body }));

const ORDER_KEY = { pk: MERCHANT_PK, sk: `ORDER#${ORDER_UUID}` };

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
});

describe('PATCH /api/v2/orders/{uuid}', () => {
  it('replaces total_shipping_value with one conditional UpdateItem that bumps the version (no gsi2 entry), and answers 200 with the full order', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({
      Attributes: storedOrder({ total_shipping_value: 1250, updated_at: '2026-03-05T09:00:00.000Z', version: 2 }),
    });

    // Act
    const response = await patch({ total_shipping_value: 1250 });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.order).toMatchObject({
      uuid: ORDER_UUID,
      total_shipping_value: 1250,
      updated_at: '2026-03-05T09:00:00.000Z',
      cancelled_at: null,
    });
    expect(response.body.data.order).not.toHaveProperty('version');
    expect(response.body.meta.trace_id).toMatch(TRACE_ID);
    expect(ddbMock).toHaveReceivedNthCommandWith(UpdateCommand, 1, {
      TableName: 'unit-table',
      Key: ORDER_KEY,
      UpdateExpression:
        'SET total_shipping_value = :value, updated_at = :now, last_write_id = :writeId, version = if_not_exists(version, :one) + :one',
      ExpressionAttributeValues: {
        ':value': 1250,
        ':now': expect.any(String),
        ':writeId': expect.stringMatching(UUID),
        ':one': 1,
      },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    // Nothing after the write: no published mark, nothing to SQS (the change feed announces the new version).
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
    const condition = ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input.ConditionExpression;
    expect(condition).toContain('attribute_exists(pk)');
    expect(condition).toContain('attribute_not_exists(cancelled_at)');
    // A write this request already applied (its answer lost) is never applied twice.
    expect(condition).toContain('(attribute_not_exists(last_write_id) OR last_write_id <> :writeId)');
    // Read-free: the condition decides, no GetItem of the order first.
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: ORDER_KEY });
  });

  it('still answers 200 when SQS is down: the request path never calls it', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({ Attributes: storedOrder({ total_shipping_value: 1250, version: 2 }) });
    sqsMock.onAnyCommand().rejects(new Error('connect ECONNREFUSED'));

    // Act
    const response = await patch({ total_shipping_value: 1250 });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('accepts a shipping value of 0', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({ Attributes: storedOrder({ total_shipping_value: 0 }) });

    // Act
    const response = await patch({ total_shipping_value: 0 });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.order.total_shipping_value).toBe(0);
  });

  it('answers 404 when the condition fails and there was no item', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(conditionFailed());

    // Act
    const response = await patch({ total_shipping_value: 10 });

    // Assess
    expectV2Error(response, 404, { message: ['Not Found'] });
  });

  it('answers 422 with errors.message when the order is cancelled', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(conditionFailed(marshall(storedOrder({ cancelled_at: '2026-03-02T08:00:00.000Z' }))));

    // Act
    const response = await patch({ total_shipping_value: 10 });

    // Assess
    expectV2Error(response, 422, { message: ['The order is cancelled and can no longer be updated.'] });
  });

  it('answers 422 "prohibited" for any field besides total_shipping_value, without writing', async () => {
    // Act
    const response = await patch({ total_shipping_value: 10, order_no: 'B-2', affiliate_slug: 'bob' });

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual({
      order_no: ['The order no field is prohibited.'],
      affiliate_slug: ['The affiliate slug field is prohibited.'],
    });
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it.each([
    [{}, 'The total shipping value field is required.'],
    [{ total_shipping_value: null }, 'The total shipping value field is required.'],
    [{ total_shipping_value: -1 }, 'The total shipping value field must be at least 0.'],
    [{ total_shipping_value: 1.5 }, 'The total shipping value field must be an integer.'],
  ])('answers 422 on total_shipping_value for %o', async (body, message) => {
    // Act
    const response = await patch(body);

    // Assess
    expectV2Error(response, 422, { total_shipping_value: [message] });
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('answers 422 "required" when there is no body at all', async () => {
    // Act
    const response = await invoke(updateOrder, apiEvent('orders-update', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expectV2Error(response, 422, { total_shipping_value: ['The total shipping value field is required.'] });
  });

  it('answers 404 to a non-UUID path before validating the body or writing', async () => {
    // Act
    const response = await patch({ nonsense: true }, 'nope');

    // Assess
    expect(response.statusCode).toBe(404);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });
});
