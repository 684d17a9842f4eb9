import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as cancelOrder } from '#functions/orders/cancel';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { conditionFailed, ddbMock, resetAwsMocks, sqsMock } from './support/aws';
import { MERCHANT_PK, ORDER_UUID, storedOrder, stubAuth, TOKENS, TRACE_ID, UUID } from './support/fixtures';

const cancel = (uuid = ORDER_UUID) => invoke(cancelOrder, apiEvent('orders-cancel', { token: TOKENS.live, pathParameters: { uuid } }));

const ORDER_KEY = { pk: MERCHANT_PK, sk: `ORDER#${ORDER_UUID}` };

/** The order as it was, in the AttributeValue form DynamoDB returns with a failed condition. */
const oldItem = (extra: Record<string, string> = {}) =>
  marshall(storedOrder({ created_at: '2026-01-10T10:00:00.000Z', updated_at: '2026-01-10T10:00:00.000Z', ...extra }));

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-03-31T12:34:56.789Z'));
});

afterEach(() => {
  vi.useRealTimers();
});

describe('POST /api/v2/orders/{uuid}/cancel', () => {
  it('cancels with one conditional UpdateItem (version bump, no gsi2 entry), answers 200 with cancelled_at set, and sends nothing to SQS', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({
      Attributes: storedOrder({
        cancelled_at: '2026-03-31T12:34:56.789Z',
        updated_at: '2026-03-31T12:34:56.789Z',
        version: 3,
      }),
    });

    // Act
    const response = await cancel();

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.order).toMatchObject({ uuid: ORDER_UUID, cancelled_at: '2026-03-31T12:34:56.789Z' });
    expect(response.body.meta.trace_id).toMatch(TRACE_ID);
    expect(ddbMock).toHaveReceivedNthCommandWith(UpdateCommand, 1, {
      TableName: 'unit-table',
      Key: ORDER_KEY,
      UpdateExpression:
        'SET cancelled_at = :now, updated_at = :now, last_write_id = :writeId, version = if_not_exists(version, :one) + :one',
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    // Nothing after the write: no published mark, nothing to SQS (the change feed announces order.cancelled).
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('still answers 200 when SQS is down: the request path never calls it', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({ Attributes: storedOrder({ cancelled_at: '2026-03-31T12:34:56.789Z', version: 2 }) });
    sqsMock.onAnyCommand().rejects(new Error('QueueDoesNotExist'));

    // Act
    const response = await cancel();

    // Assess
    expect(response.statusCode).toBe(200);
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('puts every rule in the condition, with the cutoff one calendar month back (Mar 31 -> Feb 28)', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({ Attributes: storedOrder({ cancelled_at: '2026-03-31T12:34:56.789Z', version: 2 }) });

    // Act
    await cancel();

    // Assess
    const input = ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.ConditionExpression).toContain('attribute_exists(pk)');
    expect(input?.ConditionExpression).toContain('attribute_not_exists(cancelled_at)');
    expect(input?.ConditionExpression).toContain('attribute_not_exists(payment_id)');
    expect(input?.ConditionExpression).toContain('created_at >= :cutoff');
    // A write this request already applied (its answer lost) is never applied twice.
    expect(input?.ConditionExpression).toContain('(attribute_not_exists(last_write_id) OR last_write_id <> :writeId)');
    expect(input?.ExpressionAttributeValues).toEqual({
      ':now': '2026-03-31T12:34:56.789Z',
      ':cutoff': '2026-02-28T12:34:56.789Z',
      ':writeId': expect.stringMatching(UUID),
      ':one': 1,
    });
  });

  it('answers 404 when the condition fails and there was no item', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(conditionFailed());

    // Act
    const response = await cancel();

    // Assess
    expectV2Error(response, 404, { message: ['Not Found'] });
  });

  it('answers 422 "already cancelled" when the old item has cancelled_at (even if also paid and old)', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(conditionFailed(oldItem({ cancelled_at: '2026-03-01T00:00:00.000Z', payment_id: 'pay_1' })));

    // Act
    const response = await cancel();

    // Assess
    expectV2Error(response, 422, { message: ['The order is already cancelled.'] });
  });

  it('answers 422 "linked to a payment" when the old item has a payment_id', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(conditionFailed(oldItem({ payment_id: 'pay_1' })));

    // Act
    const response = await cancel();

    // Assess
    expectV2Error(response, 422, { message: ['The order is linked to a payment and cannot be cancelled.'] });
  });

  it('answers 422 "older than one month" when the old item is neither cancelled nor paid', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(conditionFailed(oldItem()));

    // Act
    const response = await cancel();

    // Assess
    expectV2Error(response, 422, { message: ['The order is older than one month and can no longer be cancelled.'] });
  });

  it('answers 404 to a non-UUID path without writing', async () => {
    // Act
    const response = await cancel('order-1');

    // Assess
    expect(response.statusCode).toBe(404);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('answers a generic 500 when the table fails for another reason', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(new Error('ThrottlingException: arn:aws:dynamodb:us-east-1:123456789012:table/unit-table'));

    // Act
    const response = await cancel();

    // Assess
    expectV2Error(response, 500, { message: ['Server Error'] });
    expect(response.raw).not.toContain('arn:aws');
  });
});
