import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as relayHandler } from '#functions/outbox/relay';
import { logger } from '#shared/logger';
import { sqs } from '#shared/queue/client';
import { orderEventMessage, publishOrderEvents, relayPendingOrders } from '#shared/queue/orders';
import { workerContext } from './support/api';
import { conditionFailed, ddbMock, resetAwsMocks, sqsMock } from './support/aws';
import { storedOrder } from './support/fixtures';

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

const PUBLISHED = 'SET published_version = :v REMOVE gsi2pk, gsi2sk';
/** The orders whose outbox entry was cleared (published_version set), in call order. */
const removedKeys = () =>
  ddbMock
    .commandCalls(UpdateCommand)
    .filter((call) => call.args[0].input.UpdateExpression === PUBLISHED)
    .map((call) => call.args[0].input.Key);
/** The block counts marked for recount (a RECOUNT entry on gsi2), in call order. */
const recountMarks = () =>
  ddbMock
    .commandCalls(UpdateCommand)
    .filter((call) => call.args[0].input.ExpressionAttributeValues?.[':outboxKind'] === 'RECOUNT')
    .map((call) => call.args[0].input.Key);
/** The order list's first block count of a merchant (sequence numbers 0-255). */
const firstOrderBlock = (merchantId: string) => ({ pk: `M#${merchantId}#COUNTS`, sk: 'orders#all#00000000' });

/** The order each outbox entry points at, as stored: accepted, nothing published yet. */
const storeOrders = (entries: { pk: string; sk: string }[], extra: Record<string, unknown> = { version: 1, published_version: 0 }) => {
  for (const { pk, sk } of entries)
    ddbMock.on(GetCommand, { Key: { pk, sk } }).resolves({ Item: { ...storedOrder({ uuid: sk.slice(6), ...extra }), pk, sk } });
};

const accepted = (merchantId: string, uuid: string) =>
  JSON.stringify({ type: 'order.accepted', merchant_id: merchantId, order_uuid: uuid, version: 1 });
const NEW_ORDER = { uuid: 'o-1', version: 1, published_version: 0 };

beforeEach(() => {
  resetAwsMocks();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(NOW));
  ddbMock.on(UpdateCommand).resolves({});
  ddbMock.on(GetCommand).resolves({});
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('orderEventMessage', () => {
  it('names the order, its merchant and the version, and takes the kind of the version from the order', () => {
    expect(orderEventMessage('m-1', 'o-1', { version: 1 }, 1)).toEqual({
      type: 'order.accepted',
      merchant_id: 'm-1',
      order_uuid: 'o-1',
      version: 1,
    });
    expect(orderEventMessage('m-1', 'o-1', { version: 3 }, 2).type).toBe('order.shipping_updated');
    expect(orderEventMessage('m-1', 'o-1', { version: 3, cancelled_at: NOW }, 2).type).toBe('order.shipping_updated');
    expect(orderEventMessage('m-1', 'o-1', { version: 3, cancelled_at: NOW }, 3).type).toBe('order.cancelled');
  });
});

describe('publishOrderEvents (fast path)', () => {
  it('sends order.accepted to the orders queue, then marks version 1 published and clears the outbox entry', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    let sentBeforeClearing = false;
    ddbMock.on(UpdateCommand).callsFake(async () => {
      sentBeforeClearing = sqsMock.commandCalls(SendMessageCommand).length === 1;
      return {};
    });

    // Act
    const published = await publishOrderEvents(MERCHANT_A, NEW_ORDER);

    // Assess
    expect(published).toBe(true);
    expect(sqsMock).toHaveReceivedCommandExactlyOnceWith(SendMessageCommand, {
      QueueUrl: QUEUE_URL,
      MessageBody: accepted(MERCHANT_A, 'o-1'),
    });
    expect(ddbMock).toHaveReceivedCommandExactlyOnceWith(UpdateCommand, {
      TableName: 'unit-table',
      Key: { pk: `M#${MERCHANT_A}`, sk: 'ORDER#o-1' },
      UpdateExpression: 'SET published_version = :v REMOVE gsi2pk, gsi2sk',
      ConditionExpression:
        'attribute_exists(pk) AND (attribute_not_exists(published_version) OR published_version <= :v) AND (attribute_not_exists(version) OR version = :v)',
      ExpressionAttributeValues: { ':v': 1 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(sentBeforeClearing).toBe(true);
  });

  it('sends one message per unpublished version, in order, and marks the last one published', async () => {
    // Prepare: two changes since the last publish (a PATCH, then the cancel)
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });

    // Act
    const published = await publishOrderEvents(MERCHANT_A, { uuid: 'o-1', version: 4, published_version: 2, cancelled_at: NOW });

    // Assess
    expect(published).toBe(true);
    expect(sqsMock.commandCalls(SendMessageCommand).map((call) => JSON.parse(call.args[0].input.MessageBody ?? ''))).toEqual([
      { type: 'order.shipping_updated', merchant_id: MERCHANT_A, order_uuid: 'o-1', version: 3 },
      { type: 'order.cancelled', merchant_id: MERCHANT_A, order_uuid: 'o-1', version: 4 },
    ]);
    expect(ddbMock).toHaveReceivedCommandExactlyOnceWith(UpdateCommand, {
      ExpressionAttributeValues: { ':v': 4 },
      ConditionExpression: expect.stringContaining('AND version = :v'),
    });
  });

  it('moves published_version up without clearing the entry when the order changed again meanwhile', async () => {
    // Prepare: the order is at version 3 by the time version 2 is marked
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    ddbMock
      .on(UpdateCommand, { UpdateExpression: 'SET published_version = :v REMOVE gsi2pk, gsi2sk' })
      .rejects(conditionFailed(marshall(storedOrder({ uuid: 'o-1', version: 3, published_version: 1 }))));

    // Act
    await publishOrderEvents(MERCHANT_A, { uuid: 'o-1', version: 2, published_version: 1 });

    // Assess
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      UpdateExpression: 'SET published_version = :v',
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(published_version) OR published_version < :v)',
      ExpressionAttributeValues: { ':v': 2 },
    });
  });

  it('sends nothing when every version is already published', async () => {
    // Act
    const published = await publishOrderEvents(MERCHANT_A, { uuid: 'o-1', version: 2, published_version: 2 });

    // Assess
    expect(published).toBe(true);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
    expect(ddbMock).not.toHaveReceivedAnyCommand();
  });

  it('returns false and keeps the outbox entry when the queue refuses, logging a warning', async () => {
    // Prepare
    const warned = vi.spyOn(logger, 'warn');
    sqsMock.on(SendMessageCommand).rejects(new Error('QueueDoesNotExist'));

    // Act
    const published = await publishOrderEvents(MERCHANT_A, NEW_ORDER);

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
    const published = await publishOrderEvents(MERCHANT_A, NEW_ORDER);

    // Assess
    expect(published).toBe(true);
  });
});

describe('publishOrderEvents against a hung dependency', () => {
  const never = () => new Promise<never>(() => undefined);

  it('gives up on a queue that never answers once the publish budget is spent, keeping the outbox entry', async () => {
    // Prepare
    const warned = vi.spyOn(logger, 'warn');
    sqsMock.on(SendMessageCommand).callsFake(never);

    // Act
    const published = await publishOrderEvents(MERCHANT_A, NEW_ORDER, 50);

    // Assess
    expect(published).toBe(false);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
    expect(warned).toHaveBeenCalledWith(
      expect.stringContaining('outbox relay'),
      expect.objectContaining({ error: expect.objectContaining({ name: 'TimeoutError' }) }),
    );
  });

  it('gives up on clearing an outbox entry that never answers, and still reports the message as sent', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    ddbMock.on(UpdateCommand).callsFake(never);

    // Act
    const published = await publishOrderEvents(MERCHANT_A, NEW_ORDER, 50);

    // Assess
    expect(published).toBe(true);
  });

  it('hands the SDK an abort signal, so the request itself is torn down at the deadline', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    const send = vi.spyOn(sqs, 'send');

    // Act
    await publishOrderEvents(MERCHANT_A, NEW_ORDER);

    // Assess
    expect(send.mock.calls[0]?.[1]).toMatchObject({ abortSignal: expect.any(AbortSignal) });
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
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk <= :cutoff',
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
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      ExpressionAttributeValues: { ':pk': 'OUTBOX', ':cutoff': '2026-03-10T08:59:30.000Z' },
    });
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

  it('sends one batch naming each order, its merchant and version, then clears every entry SQS accepted', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolvesOnce({ Items: ENTRIES }).resolves({ Items: [] });
    storeOrders(ENTRIES);
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(3);
    expect(sqsMock).toHaveReceivedCommandExactlyOnceWith(SendMessageBatchCommand, {
      QueueUrl: QUEUE_URL,
      Entries: [
        { Id: '0', MessageBody: accepted(MERCHANT_A, '00000000-0000-4000-8000-00000000000a') },
        { Id: '1', MessageBody: accepted(MERCHANT_B, '00000000-0000-4000-8000-00000000000b') },
        { Id: '2', MessageBody: accepted(MERCHANT_A, '00000000-0000-4000-8000-00000000000c') },
      ],
    });
    expect(removedKeys()).toEqual(ENTRIES.map(({ pk, sk }) => ({ pk, sk })));
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      UpdateExpression: 'SET published_version = :v REMOVE gsi2pk, gsi2sk',
      ExpressionAttributeValues: { ':v': 1 },
    });
    // Nothing of these creates was ever published: each may have stopped before counting its order.
    // One mark per block: merchant A's two orders share theirs.
    expect(recountMarks()).toEqual([firstOrderBlock(MERCHANT_A), firstOrderBlock(MERCHANT_B)]);
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: { pk: ENTRIES[0]?.pk, sk: ENTRIES[0]?.sk }, ConsistentRead: true });
  });

  it('sends every unpublished version of an order (the changes made while SQS was down) and marks the last', async () => {
    // Prepare: accepted and published, then PATCHed and cancelled while the queue was down
    const entry = ENTRIES[0]!;
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [entry] })
      .resolves({ Items: [] });
    storeOrders([entry], { version: 3, published_version: 1, cancelled_at: '2026-03-10T08:55:00.000Z' });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(2);
    const bodies = sqsMock.commandCalls(SendMessageBatchCommand)[0]?.args[0].input.Entries?.map((e) => JSON.parse(e.MessageBody ?? ''));
    expect(bodies).toEqual([
      { type: 'order.shipping_updated', merchant_id: MERCHANT_A, order_uuid: '00000000-0000-4000-8000-00000000000a', version: 2 },
      { type: 'order.cancelled', merchant_id: MERCHANT_A, order_uuid: '00000000-0000-4000-8000-00000000000a', version: 3 },
    ]);
    expect(ddbMock).toHaveReceivedCommandExactlyOnceWith(UpdateCommand, {
      Key: { pk: entry.pk, sk: entry.sk },
      ExpressionAttributeValues: { ':v': 3 },
    });
  });

  it('marks only the versions before the first one SQS refused', async () => {
    // Prepare
    const entry = ENTRIES[0]!;
    ddbMock.on(QueryCommand).resolves({ Items: [entry] });
    storeOrders([entry], { version: 3, published_version: 0 });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer(['0', '2']));

    // Act
    await relayPendingOrders();

    // Assess: version 1 went, 2 did not; 3 went but waits for 2 (it is sent again next run)
    expect(removedKeys()).toEqual([{ pk: entry.pk, sk: entry.sk }]);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, { UpdateExpression: PUBLISHED, ExpressionAttributeValues: { ':v': 1 } });
    expect(recountMarks()).toEqual([firstOrderBlock(MERCHANT_A)]);
  });

  it('clears only the entries SQS accepted and stops the run on a partial failure', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolves({ Items: ENTRIES });
    storeOrders(ENTRIES);
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
    storeOrders(ENTRIES);
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer([]));

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(0);
    expect(removedKeys()).toEqual([]);
    // The marks come before the send: an unfinished create is recounted whatever SQS says.
    expect(recountMarks()).toHaveLength(2);
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 2);
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 1);
  });

  it('keeps going batch after batch while SQS accepts, up to maxBatches', async () => {
    // Prepare: the outbox never runs dry.
    const ten = Array.from({ length: 10 }, (_, index) =>
      outboxEntry(MERCHANT_A, `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`),
    );
    ddbMock.on(QueryCommand).resolves({ Items: ten });
    storeOrders(ten);
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    const sent = await relayPendingOrders({ maxBatches: 3 });

    // Assess
    expect(sent).toBe(30);
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 3);
    expect(sqsMock).toHaveReceivedCommandTimes(SendMessageBatchCommand, 3);
    expect(removedKeys()).toHaveLength(30);
    // One mark a batch: its ten orders share a block.
    expect(recountMarks()).toHaveLength(3);
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 33);
  });
});

describe('relayPendingOrders and the list counts', () => {
  it('marks the block of an order whose first event was never published (a create that may have stopped before counting it) for recount', async () => {
    // Prepare
    const entry = ENTRIES[0]!;
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [entry] })
      .resolves({ Items: [] });
    storeOrders([entry], { version: 1, published_version: 0, seq: 700 });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    await relayPendingOrders();

    // Assess
    expect(recountMarks()).toEqual([{ pk: `M#${MERCHANT_A}#COUNTS`, sk: 'orders#all#00000002' }]);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      TableName: 'unit-table',
      Key: { pk: `M#${MERCHANT_A}#COUNTS`, sk: 'orders#all#00000002' },
      UpdateExpression:
        'ADD n :zero SET #type = :type, marked_at = :now, gsi2pk = :outboxKind, gsi2sk = if_not_exists(gsi2sk, :outboxSince)',
      ExpressionAttributeValues: { ':zero': 0, ':type': 'list_count', ':now': NOW, ':outboxKind': 'RECOUNT', ':outboxSince': NOW },
    });
  });

  it('marks nothing for an order whose create finished (its first event was published)', async () => {
    // Prepare
    const entry = ENTRIES[0]!;
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [entry] })
      .resolves({ Items: [] });
    storeOrders([entry], { version: 2, published_version: 1 });
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(1);
    expect(recountMarks()).toEqual([]);
  });

  it('still relays the events when a mark fails, and logs it', async () => {
    // Prepare
    const entry = ENTRIES[0]!;
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: [entry] })
      .resolves({ Items: [] });
    storeOrders([entry]);
    ddbMock.on(UpdateCommand, { Key: firstOrderBlock(MERCHANT_A) }).rejects(new Error('mark failed'));
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());
    const warned = vi.spyOn(logger, 'warn');

    // Act
    const sent = await relayPendingOrders();

    // Assess
    expect(sent).toBe(1);
    expect(removedKeys()).toEqual([{ pk: entry.pk, sk: entry.sk }]);
    expect(warned).toHaveBeenCalledWith('Could not mark an unfinished create for recount', { error: expect.any(Error) });
  });
});

describe('the outbox relay function', () => {
  it('relays pending orders and reports how many it sent', async () => {
    // Prepare
    ddbMock
      .on(QueryCommand)
      .resolvesOnce({ Items: ENTRIES.slice(0, 2) })
      .resolves({ Items: [] });
    storeOrders(ENTRIES.slice(0, 2));
    sqsMock.on(SendMessageBatchCommand).callsFake(batchAnswer());

    // Act
    const result = await relayHandler({}, workerContext('outbox-relay'));

    // Assess
    expect(result).toEqual({ sent: 2 });
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi2',
      ExpressionAttributeValues: { ':pk': 'OUTBOX', ':cutoff': '2026-03-10T08:59:30.000Z' },
    });
  });
});
