import { SendMessageBatchCommand, SendMessageCommand, type SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as relayHandler } from '../../functions/outbox/relay';
import { logger } from '../../shared/logger';
import { orderAcceptedMessage, publishAcceptedOrder, relayPendingOrders } from '../../shared/queue/orders';
import { lambdaContext } from './support/api';
import { ddbMock, resetAwsMocks, sqsMock } from './support/aws';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders';
const NOW = '2026-03-10T09:00:00.000Z';
const MERCHANT_A = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';
const MERCHANT_B = 'a0a0a0a0-b1b1-4c2c-8d3d-e4e4e4e4e4e4';

/** A gsi2 (KEYS_ONLY) outbox entry: the table keys and the index keys. */
const outboxEntry = (merchantId: string, orderUuid: string, acceptedAt = '2026-03-10T08:50:00.000Z') => ({
  pk: `M#${merchantId}`,
  sk: `ORDER#${orderUuid}`,
  gsi2pk: 'OUTBOX',
  gsi2sk: acceptedAt,
});

const ENTRIES = [
  outboxEntry(MERCHANT_A, '00000000-0000-4000-8000-00000000000a'),
  outboxEntry(MERCHANT_B, '00000000-0000-4000-8000-00000000000b'),
  outboxEntry(MERCHANT_A, '00000000-0000-4000-8000-00000000000c'),
];

/** SQS accepts the entries whose Id is in `accepted` (all by default) and refuses the rest. */
const batchAnswer = (accepted?: string[]) => async (input: SendMessageBatchCommandInput) => {
  const ids = (input.Entries ?? []).map((entry) => entry.Id as string);
  const ok = accepted ?? ids;
  return {
    Successful: ids.filter((id) => ok.includes(id)).map((id) => ({ Id: id, MessageId: `msg-${id}`, MD5OfMessageBody: 'x' })),
    Failed: ids.filter((id) => !ok.includes(id)).map((id) => ({ Id: id, Code: 'InternalError', SenderFault: false })),
  };
};

const removedKeys = () => ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key);

beforeEach(() => {
  resetAwsMocks();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(NOW));
  ddbMock.on(UpdateCommand).resolves({});
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('orderAcceptedMessage', () => {
  it('names the order and its merchant, nothing more', () => {
    expect(orderAcceptedMessage('m-1', 'o-1')).toEqual({ type: 'order.accepted', merchant_id: 'm-1', order_uuid: 'o-1' });
  });
});

describe('publishAcceptedOrder (fast path)', () => {
  it('sends order.accepted to the orders queue, then clears the outbox entry', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    let sentBeforeClearing = false;
    ddbMock.on(UpdateCommand).callsFake(async () => {
      sentBeforeClearing = sqsMock.commandCalls(SendMessageCommand).length === 1;
      return {};
    });

    // Act
    const published = await publishAcceptedOrder(MERCHANT_A, 'o-1');

    // Assess
    expect(published).toBe(true);
    expect(sqsMock).toHaveReceivedCommandExactlyOnceWith(SendMessageCommand, {
      QueueUrl: QUEUE_URL,
      MessageBody: JSON.stringify({ type: 'order.accepted', merchant_id: MERCHANT_A, order_uuid: 'o-1' }),
    });
    expect(ddbMock).toHaveReceivedCommandExactlyOnceWith(UpdateCommand, {
      TableName: 'unit-table',
      Key: { pk: `M#${MERCHANT_A}`, sk: 'ORDER#o-1' },
      UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
      ConditionExpression: 'attribute_exists(pk)',
    });
    expect(sentBeforeClearing).toBe(true);
  });

  it('returns false and keeps the outbox entry when the queue refuses, logging a warning', async () => {
    // Prepare
    const warned = vi.spyOn(logger, 'warn');
    sqsMock.on(SendMessageCommand).rejects(new Error('QueueDoesNotExist'));

    // Act
    const published = await publishAcceptedOrder(MERCHANT_A, 'o-1');

    // Assess
    expect(published).toBe(false);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
    expect(warned).toHaveBeenCalledWith(expect.stringContaining('outbox relay'), expect.objectContaining({ order_uuid: 'o-1' }));
  });

  it('returns true when the message was sent but the outbox entry could not be cleared', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    ddbMock.on(UpdateCommand).rejects(new Error('ThrottlingException'));

    // Act
    const published = await publishAcceptedOrder(MERCHANT_A, 'o-1');

    // Assess
    expect(published).toBe(true);
  });
});

describe('relayPendingOrders', () => {
  it('queries gsi2 for entries older than the cutoff, oldest first, ten at a time', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolves({ Items: [] });

    // Act
    await relayPendingOrders({ olderThanSeconds: 45 });

    // Assess
    expect(ddbMock).toHaveReceivedCommandExactlyOnceWith(QueryCommand, {
      TableName: 'unit-table',
      IndexName: 'gsi2',
      KeyConditionExpression: '#pk = :pk AND #sk <= :cutoff',
      ExpressionAttributeNames: { '#pk': 'gsi2pk', '#sk': 'gsi2sk' },
      ExpressionAttributeValues: { ':pk': 'OUTBOX', ':cutoff': '2026-03-10T08:59:15.000Z' },
      Limit: 10,
    });
    expect(ddbMock.commandCalls(QueryCommand)[0]?.args[0].input.ScanIndexForward).not.toBe(false);
  });

  it('uses a 30-second cutoff by default, leaving fresh entries to the fast path', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolves({ Items: [] });

    // Act
    await relayPendingOrders();

    // Assess
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, { ExpressionAttributeValues: { ':pk': 'OUTBOX', ':cutoff': '2026-03-10T08:59:30.000Z' } });
  });

  it('sends nothing when the outbox is empty', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolves({ Items: [] });

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(0);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('sends one batch naming each order and its merchant, then clears every entry SQS accepted', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolvesOnce({ Items: ENTRIES }).resolves({ Items: [] });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(3);
    expect(sqsMock).toHaveReceivedCommandExactlyOnceWith(SendMessageBatchCommand, {
      QueueUrl: QUEUE_URL,
      Entries: [
        { Id: '0', MessageBody: JSON.stringify({ type: 'order.accepted', merchant_id: MERCHANT_A, order_uuid: '00000000-0000-4000-8000-00000000000a' }) },
        { Id: '1', MessageBody: JSON.stringify({ type: 'order.accepted', merchant_id: MERCHANT_B, order_uuid: '00000000-0000-4000-8000-00000000000b' }) },
        { Id: '2', MessageBody: JSON.stringify({ type: 'order.accepted', merchant_id: MERCHANT_A, order_uuid: '00000000-0000-4000-8000-00000000000c' }) },
      ],
    });
    expect(removedKeys()).toEqual(ENTRIES.map(({ pk, sk }) => ({ pk, sk })));
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, { UpdateExpression: 'REMOVE gsi2pk, gsi2sk', ConditionExpression: 'attribute_exists(pk)' });
  });

  it('clears only the entries SQS accepted and stops the run on a partial failure', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolves({ Items: ENTRIES });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer(['0', '2']));

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(2);
    expect(removedKeys()).toEqual([ENTRIES[0], ENTRIES[2]].map((entry) => ({ pk: entry?.pk, sk: entry?.sk })));
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 1);
    expect(sqsMock).toHaveReceivedCommandTimes(SendMessageBatchCommand, 1);
  });

  it('clears nothing when SQS refuses the whole batch', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolves({ Items: ENTRIES });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer([]));

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(0);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 1);
  });

  it('keeps going batch after batch while SQS accepts, up to maxBatches', async () => {
    // Prepare: the outbox never runs dry.
    const ten = Array.from({ length: 10 }, (_, index) => outboxEntry(MERCHANT_A, `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`));
    ddbMock.on(QueryCommand).resolves({ Items: ten });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    const sent = await relayPendingOrders({ maxBatches: 3 });

    // Assess
    expect(sent).toBe(30);
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 3);
    expect(sqsMock).toHaveReceivedCommandTimes(SendMessageBatchCommand, 3);
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 30);
  });
});

describe('the outbox relay function', () => {
  it('relays pending orders and reports how many it sent', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolvesOnce({ Items: ENTRIES.slice(0, 2) }).resolves({ Items: [] });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    const result = await relayHandler({}, lambdaContext('outbox-relay'));

    // Assess
    expect(result).toEqual({ sent: 2 });
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, { IndexName: 'gsi2', ExpressionAttributeValues: { ':pk': 'OUTBOX', ':cutoff': '2026-03-10T08:59:30.000Z' } });
  });
});
