import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler } from '#functions/changes/feed';
import { reactionsTo } from '#shared/changes/feed';
import { workerContext } from './support/api';
import { batchMessagesSentTo, ddbMock, resetAwsMocks, sqsBatchAnswer, sqsMock } from './support/aws';
import { MERCHANT, MERCHANT_PK, storedOrder, storedPendingRequest } from './support/fixtures';

const ORDERS_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders';
const FOLLOW_UPS_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-follow-ups';
const PARKED_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-parked';

let sequence = 100;
/** A stream record as Lambda delivers it: images in DynamoDB JSON. */
const record = (
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE',
  after?: Record<string, unknown>,
  before?: Record<string, unknown>,
): DynamoDBRecord => {
  const item = after ?? before ?? {};
  sequence += 1;
  return {
    eventID: `event-${sequence}`,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      ApproximateCreationDateTime: 1_772_000_000,
      Keys: marshall({ pk: item.pk, sk: item.sk }) as never,
      ...(after ? { NewImage: marshall(after, { removeUndefinedValues: true }) as never } : {}),
      ...(before ? { OldImage: marshall(before, { removeUndefinedValues: true }) as never } : {}),
      SequenceNumber: String(sequence).padStart(21, '0'),
      SizeBytes: 100,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:000000000000:table/unit-table/stream/2026-01-01T00:00:00.000',
  };
};

const streamEvent = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });
const runFeed = (event: DynamoDBStreamEvent) => handler(event, workerContext('change-feed'));

beforeEach(() => {
  resetAwsMocks();
  sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer());
  sqsMock.on(SendMessageCommand).resolves({ MessageId: 'parked-1' });
  ddbMock.on(UpdateCommand).resolves({});
});

describe('reactionsTo (what a write means to the rest of the service)', () => {
  it('announces a new order as order.created, with a stable id, its time and the order as the API shows it', () => {
    // Prepare
    const order = storedOrder({ version: 1 });

    // Act
    const { orderEvent } = reactionsTo(record('INSERT', order));

    // Assess
    expect(orderEvent).toMatchObject({
      id: `evt_${order.uuid}_v1`,
      type: 'order.created',
      timestamp: order.updated_at,
      merchant_id: MERCHANT.id,
      order_uuid: order.uuid,
      version: 1,
      data: { order: { uuid: order.uuid, order_no: order.order_no, currency: { code: 'EUR' }, cancelled_at: null } },
    });
  });

  it('announces a new version as a shipping change, and the last version of a cancelled order as its cancellation', () => {
    // Prepare
    const before = storedOrder({ version: 1 });
    const shipped = storedOrder({ version: 2, total_shipping_value: 995, updated_at: '2026-03-02T10:00:00.000Z' });
    const cancelled = storedOrder({ version: 3, cancelled_at: '2026-03-03T10:00:00.000Z', updated_at: '2026-03-03T10:00:00.000Z' });

    // Act
    const shipping = reactionsTo(record('MODIFY', shipped, before)).orderEvent;
    const cancel = reactionsTo(record('MODIFY', cancelled, shipped)).orderEvent;

    // Assess
    expect(shipping).toMatchObject({ type: 'order.updated', version: 2, timestamp: '2026-03-02T10:00:00.000Z' });
    expect(cancel).toMatchObject({ type: 'order.cancelled', version: 3, id: `evt_${cancelled.uuid}_v3` });
  });

  it('announces nothing for a write that leaves the version (a bookkeeping write) or for an imported order', () => {
    // Prepare
    const order = storedOrder({ version: 2 });

    // Act
    const same = reactionsTo(record('MODIFY', { ...order, last_write_id: 'w-2' }, order));
    const imported = reactionsTo(record('INSERT', storedOrder({ history: true })));

    // Assess
    expect(same.orderEvent).toBeUndefined();
    expect(imported).toEqual({});
  });

  it("upserts a new order's customer, and only on creation", () => {
    // Prepare
    const order = storedOrder({ version: 1 });

    // Act
    const created = reactionsTo(record('INSERT', order)).customer;
    const changed = reactionsTo(record('MODIFY', storedOrder({ version: 2 }), order)).customer;

    // Assess
    expect(created).toEqual({
      merchantId: MERCHANT.id,
      customer: { name: 'Dan Customer', email: 'dan@example.com' },
      at: order.created_at,
    });
    expect(changed).toBeUndefined();
  });

  it('schedules a follow-up when an e-mail becomes owed or its retry moves, and none when it is settled or parked', () => {
    // Prepare
    const owed = storedPendingRequest({
      notification_pending_at: 'T0',
      gsi2pk: `${MERCHANT_PK}#NOTIFY`,
      gsi2sk: '2026-03-01T10:00:00.000Z',
    });
    const retry = { ...owed, notification_attempts: 1, gsi2sk: '2026-03-01T10:01:00.000Z' };
    const parked = { ...retry, notification_parked_at: 'T2', gsi2pk: `${MERCHANT_PK}#PARKED` };
    const sent = storedPendingRequest({ notified_at: 'T3' });

    // Act
    const [first] = reactionsTo(record('MODIFY', owed, storedPendingRequest())).followUps ?? [];
    const [moved] = reactionsTo(record('MODIFY', retry, owed)).followUps ?? [];
    const unmoved = reactionsTo(record('MODIFY', { ...retry, updated_at: 'later' }, retry)).followUps;
    const none = [reactionsTo(record('MODIFY', parked, retry)).followUps, reactionsTo(record('MODIFY', sent, retry)).followUps];

    // Assess
    expect(first).toEqual({ kind: 'notify', key: { pk: MERCHANT_PK, sk: owed.sk }, due: '2026-03-01T10:00:00.000Z' });
    expect(moved).toEqual({ kind: 'notify', key: { pk: MERCHANT_PK, sk: owed.sk }, due: '2026-03-01T10:01:00.000Z' });
    expect(unmoved).toBeUndefined();
    expect(none).toEqual([undefined, undefined]);
  });

  it('schedules a recount for every new mark on a block count, not for its count changes', () => {
    // Prepare
    const block = { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000000', type: 'list_count', n: 4 };
    const marked = {
      ...block,
      marked_at: '2026-03-01T10:00:00.000Z',
      gsi2pk: `${MERCHANT_PK}#RECOUNT`,
      gsi2sk: '2026-03-01T10:00:00.000Z',
    };

    // Act
    const [mark] = reactionsTo(record('MODIFY', marked, block)).followUps ?? [];
    const counted = reactionsTo(record('MODIFY', { ...marked, n: 5 }, marked)).followUps;

    // Assess
    expect(mark).toEqual({ kind: 'recount', key: { pk: block.pk, sk: block.sk }, due: '2026-03-01T10:00:00.000Z' });
    expect(counted).toBeUndefined();
  });

  it('refreshes the group total of a block count whose version moved, and of nothing else', () => {
    // Prepare
    const block = { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000070', type: 'list_count', n: 4, v: 4 };
    const group = { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#G#00000001', type: 'list_group_total', n: 300, vs: 310 };

    // Act
    const counted = reactionsTo(record('MODIFY', { ...block, n: 5, v: 5 }, block)).countBlock;
    const marked = reactionsTo(record('MODIFY', { ...block, marked_at: 'T' }, block)).countBlock;
    const total = reactionsTo(record('MODIFY', { ...group, n: 301, vs: 311 }, group)).countBlock;

    // Assess
    expect(counted).toEqual({ merchantId: MERCHANT.id, block: { list: 'orders', bucket: 'all', block: 70 } });
    expect(marked).toBeUndefined();
    expect(total).toBeUndefined();
  });

  it('recounts each order block the sequence counter moved past, and nothing while it stays in a block', () => {
    // Prepare
    const counter = { pk: MERCHANT_PK, sk: 'COUNTER#orders', type: 'counter', seq: 254 };

    // Act
    const within = reactionsTo(record('MODIFY', { ...counter, seq: 255 }, counter)).followUps;
    const past = reactionsTo(record('MODIFY', { ...counter, seq: 256 }, { ...counter, seq: 255 })).followUps;
    const invites = reactionsTo(
      record('MODIFY', { ...counter, sk: 'COUNTER#invites', seq: 256 }, { ...counter, sk: 'COUNTER#invites', seq: 255 }),
    );

    // Assess
    expect(within).toBeUndefined();
    expect(past).toEqual([{ kind: 'recount', key: { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000000' }, due: expect.any(String) }]);
    expect(invites.followUps).toBeUndefined();
  });

  it('ignores removed items', () => {
    expect(reactionsTo(record('REMOVE', undefined, storedOrder()))).toEqual({});
  });
});

describe('the change-feed function', () => {
  it("sends each new order version to the orders queue, upserts the new order's customer, and reports no failure", async () => {
    // Prepare
    const first = storedOrder({ uuid: '00000000-0000-4000-8000-00000000000a', version: 1 });
    const second = storedOrder({ uuid: '00000000-0000-4000-8000-00000000000b', version: 1, customer: null });

    // Act
    const result = await runFeed(streamEvent(record('INSERT', first), record('INSERT', second)));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(batchMessagesSentTo(ORDERS_QUEUE).map(({ body }) => [body.order_uuid, body.type])).toEqual([
      [first.uuid, 'order.created'],
      [second.uuid, 'order.created'],
    ]);
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, { Key: { pk: MERCHANT_PK, sk: 'CUSTOMER#dan@example.com' } });
  });

  it('reports the first record whose event SQS refused, so the stream is read again from there (nothing lost)', async () => {
    // Prepare
    sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer(['0', '2']));
    const records = [0, 1, 2].map((index) =>
      record('INSERT', storedOrder({ uuid: `00000000-0000-4000-8000-00000000000${index}`, customer: null })),
    );

    // Act
    const result = await runFeed(streamEvent(...records));

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: records[1]?.dynamodb?.SequenceNumber }] });
  });

  it('reports the record whose customer upsert failed', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }));
    const withCustomer = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-00000000000c' }));

    // Act
    const result = await runFeed(
      streamEvent(record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-00000000000d', customer: null })), withCustomer),
    );

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: withCustomer.dynamodb?.SequenceNumber }] });
  });

  it('refreshes each changed group once per batch (a consistent Query of its blocks, a conditional UpdateItem)', async () => {
    // Prepare: two changes in one block, one in another block of the same group
    const block = (n: number, v: number, sk = 'orders#all#00000000') => ({ pk: `${MERCHANT_PK}#COUNTS`, sk, type: 'list_count', n, v });
    ddbMock.on(QueryCommand).resolves({ Items: [block(2, 2), block(1, 1, 'orders#all#00000001')] });

    // Act
    const result = await runFeed(
      streamEvent(
        record('MODIFY', block(1, 1), block(0, 0)),
        record('MODIFY', block(2, 2), block(1, 1)),
        record('INSERT', block(1, 1, 'orders#all#00000001')),
      ),
    );

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddbMock).toHaveReceivedCommandTimes(QueryCommand, 1);
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, { ConsistentRead: true });
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#G#00000000' },
      ExpressionAttributeValues: expect.objectContaining({ ':n': 3, ':vs': 3 }),
    });
  });

  it("sends the recount of an order block the sequence counter moved past to the follow-ups queue, delayed by the minimum (longer than a request's timeout)", async () => {
    // Prepare
    const counter = { pk: MERCHANT_PK, sk: 'COUNTER#orders', type: 'counter', seq: 255 };

    // Act
    const result = await runFeed(streamEvent(record('MODIFY', { ...counter, seq: 256 }, counter)));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(batchMessagesSentTo(FOLLOW_UPS_QUEUE)).toEqual([
      { body: { kind: 'recount', key: { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000000' }, due: expect.any(String) }, delay: 60 },
    ]);
  });

  it('delays each follow-up until it is due, at least the configured minimum', async () => {
    // Prepare
    const due = new Date(Date.now() + 300_000).toISOString();
    const owed = storedPendingRequest({ notification_pending_at: 'T0', gsi2pk: `${MERCHANT_PK}#NOTIFY`, gsi2sk: due });

    // Act
    await runFeed(streamEvent(record('MODIFY', owed, storedPendingRequest())));

    // Assess
    const [followUp] = batchMessagesSentTo(FOLLOW_UPS_QUEUE);
    expect(followUp?.body).toEqual({ kind: 'notify', key: { pk: MERCHANT_PK, sk: owed.sk }, due });
    expect(followUp?.delay).toBeGreaterThanOrEqual(299);
    expect(followUp?.delay).toBeLessThanOrEqual(300);
  });

  it('parks a record it cannot read, with the reason, and goes on with the others', async () => {
    // Prepare
    const poison = record('INSERT', { ...storedOrder(), order_rows: 'not rows' });
    const good = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-00000000000e', customer: null }));

    // Act
    const result = await runFeed(streamEvent(poison, good));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(sqsMock).toHaveReceivedCommandWith(SendMessageCommand, {
      QueueUrl: PARKED_QUEUE,
      MessageBody: JSON.stringify(poison),
      MessageAttributes: expect.objectContaining({ dead_letter_source: { DataType: 'String', StringValue: 'change-feed' } }),
    });
    expect(batchMessagesSentTo(ORDERS_QUEUE).map(({ body }) => body.order_uuid)).toEqual(['00000000-0000-4000-8000-00000000000e']);
  });

  it('reports a record it cannot read when the parked queue refuses it too', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).rejects(new Error('connect ECONNREFUSED'));
    const poison = record('INSERT', { ...storedOrder(), order_rows: 'not rows' });

    // Act
    const result = await runFeed(streamEvent(poison));

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: poison.dynamodb?.SequenceNumber }] });
  });
});
