import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { BatchWriteCommand, PutCommand, QueryCommand, type QueryCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { handler, processChangeRecords } from '#functions/changes/feed';
import { passesFilters } from '#local/event-filter';
import { CHANGE_FEED_FILTERS, reactionsTo } from '#shared/changes/feed';
import { DEFAULT_PARK_POLICY } from '#shared/changes/retries';
import { BLOCK_SIZE, GROUP_SIZE } from '#shared/db/entities/counter';
import { metrics } from '#shared/metrics';
import { MAX_BATCH_BYTES } from '#shared/queue/send-batch';
import { readDeliveryMessage, sendDeliveries } from '#shared/queue/webhooks';
import { workerContext } from './support/api';
import { batchMessagesSentTo, conditionFailed, ddbMock, resetAwsMocks, sqsBatchAnswer, sqsMock } from './support/aws';
import { MERCHANT, MERCHANT_PK, OTHER_MERCHANT_ID, storedOrder, storedPendingRequest } from './support/fixtures';

const ORDERS_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders';
const FOLLOW_UPS_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-follow-ups';
const PARKED_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-parked';
const WEBHOOKS_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-webhooks';
const SLOW_WEBHOOKS_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-webhooks-slow';

/** A stored webhook endpoint of the merchant. */
const endpoint = (uuid: string, overrides: Record<string, unknown> = {}) => ({
  pk: MERCHANT_PK,
  sk: `WEBHOOK#${uuid}`,
  type: 'webhook_endpoint',
  uuid,
  url: 'https://hooks.example.com/in',
  description: null,
  events: [],
  enabled: true,
  disabled_reason: null,
  secret_box: 'v1.sealed',
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:00:00.000Z',
  // Its last delivery answered promptly: its deliveries go on the lane of endpoints that answer.
  fast_at: '2026-03-01T10:00:00.000Z',
  ...overrides,
});

/** An invite whose e-mail has not gone out yet. */
const INVITE = {
  ...{ pk: MERCHANT_PK, sk: 'INVITE#i1', type: 'invite', uuid: 'i1', seq: 1, email: 'erin@example.com', sender_email: null },
  ...{ content: null, link_used_at: null, created_at: 'T0', updated_at: 'T0' },
};

/** A commission ledger with its accrual. */
const LEDGER = {
  pk: MERCHANT_PK,
  sk: 'COMMISSION#o1',
  type: 'commission',
  order_uuid: 'o1',
  order_no: 'A-1',
  affiliate_slug: 'alice',
  tier_slug: null,
  currency_code: 'EUR',
  status: 'pending',
  rows: [],
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:00:00.000Z',
  applied_version: 1,
  net_amount: 500,
  entries: [{ type: 'accrual', amount: 500, at: '2026-03-01T10:00:00.000Z', version: 1 }],
};

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
  // The change feed logs events with BatchWriteItem: all processed.
  ddbMock.on(BatchWriteCommand).resolves({});
  sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer());
  sqsMock.on(SendMessageCommand).resolves({ MessageId: 'parked-1' });
  ddbMock.on(UpdateCommand).resolves({});
  ddbMock.on(QueryCommand).resolves({ Items: [] });
});

/** The orders' sequence (on the merchant's quota item) as a consistent read of it finds it. */
const sequenceAt = (seq: number) =>
  ddbMock
    .on(QueryCommand, {
      KeyConditionExpression: 'pk = :pk AND sk = :sk',
      ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#QUOTA`, ':sk': 'QUOTA' },
    })
    .resolves({ Items: [{ orders_seq: seq }] });

/** The sort keys of the group totals written so far, in order. */
const totalsWritten = () =>
  ddbMock
    .commandCalls(UpdateCommand)
    .map((call) => String(call.args[0].input.Key?.sk))
    .filter((sk) => sk.includes('#G#'));

/** The calls of one kind outside the merchant's event log (its own reaction, tested apart). */
const callsBesideEventLog = (command: typeof QueryCommand | typeof UpdateCommand | typeof PutCommand) =>
  ddbMock.commandCalls(command as never).filter((call) => {
    const input = call.args[0].input as { Key?: { pk?: string }; Item?: { pk?: string }; ExpressionAttributeValues?: { ':pk'?: unknown } };
    return !String(input.Key?.pk ?? input.Item?.pk ?? input.ExpressionAttributeValues?.[':pk']).endsWith('#EVENTS');
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

  it("refreshes the orders' group of blocks the sequence counter leaves, and none while it stays in a group", () => {
    // Prepare
    const counter = { pk: MERCHANT_PK, sk: 'COUNTER#orders', type: 'counter', seq: GROUP_SIZE * BLOCK_SIZE - 2 };

    // Act
    const within = reactionsTo(record('MODIFY', { ...counter, seq: counter.seq + 1 }, counter)).countBlock;
    const left = reactionsTo(record('MODIFY', { ...counter, seq: counter.seq + 2 }, { ...counter, seq: counter.seq + 1 })).countBlock;

    // Assess
    expect(within).toBeUndefined();
    expect(left).toEqual({ merchantId: MERCHANT.id, block: { list: 'orders', bucket: 'all', block: GROUP_SIZE - 1 } });
  });

  it('derives the webhook events of other items: a request decided, an invitation sent and then used, a commission booked', () => {
    // Prepare
    const pending = storedPendingRequest();
    const sent = { ...INVITE, notified_at: 'T1' };
    const ledger = LEDGER;

    // Act
    const decided = reactionsTo(record('MODIFY', { ...pending, status: 'accepted', decided_at: 'T2' }, pending)).webhookEvents;
    const invited = reactionsTo(record('MODIFY', sent, { ...sent, notified_at: undefined })).webhookEvents;
    const used = reactionsTo(record('MODIFY', { ...sent, link_used_at: 'T3' }, sent)).webhookEvents;
    const reversed = {
      ...ledger,
      applied_version: 2,
      net_amount: 0,
      entries: [...ledger.entries, { type: 'reversal', amount: -500, at: 'T4', version: 2 }],
    };
    const booked = reactionsTo(record('MODIFY', reversed, ledger)).webhookEvents;

    // Assess
    expect(decided?.events.map(({ id, type }) => [id, type])).toEqual([
      [`evt_areq_${pending.uuid}_accepted`, 'affiliate_request.accepted'],
    ]);
    expect(invited?.events.map(({ type, timestamp }) => [type, timestamp])).toEqual([['invite.sent', 'T1']]);
    expect(used?.events.map(({ type, timestamp }) => [type, timestamp])).toEqual([['invite.accepted', 'T3']]);
    expect(booked?.events).toEqual([
      expect.objectContaining({
        id: 'evt_commission_o1_reversal_v2',
        type: 'commission.reversed',
        data: { commission: expect.objectContaining({ amount: -500, net_amount: 0 }) },
      }),
    ]);
    expect(decided?.merchantId).toBe(MERCHANT.id);
  });

  it('ignores removed items', () => {
    expect(reactionsTo(record('REMOVE', undefined, storedOrder()))).toEqual({});
  });
});

describe("the change feed's event filter", () => {
  it('lets every write with a reaction through, and keeps away the writes of items that never have one and every removal', () => {
    // Prepare: a write of each item type the feed reacts to, and of the items written most that it never reacts to.
    const pending = storedPendingRequest();
    const block = { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000070', type: 'list_count', n: 4, v: 4 };
    const counter = { pk: MERCHANT_PK, sk: 'COUNTER#orders', type: 'counter', seq: 255 };
    const quota = { pk: `${MERCHANT_PK}#QUOTA`, sk: 'QUOTA', tat_us: 1 };
    const reacting = [
      record('INSERT', storedOrder()),
      record('INSERT', pending),
      record('MODIFY', { ...pending, status: 'accepted', decided_at: 'T2' }, pending),
      record('MODIFY', { ...INVITE, notified_at: 'T1' }, INVITE),
      record('INSERT', LEDGER),
      record('MODIFY', { ...block, n: 5, v: 5 }, block),
      record('MODIFY', { ...counter, seq: 256 }, counter),
      record('MODIFY', { ...quota, tat_us: 2, orders_seq: 256, seq_taken: true }, { ...quota, orders_seq: 255, seq_taken: true }),
    ];
    const idle = [
      // A quota take that took no sequence number (every route's but a create's) removes the mark.
      record('MODIFY', { ...quota, tat_us: 3, orders_seq: 256 }, { ...quota, tat_us: 2, orders_seq: 256, seq_taken: true }),
      record('INSERT', { pk: `${MERCHANT_PK}#EVENTS`, sk: '1.000', type: 'event_log', event: '{}' }),
      record('MODIFY', { pk: `${MERCHANT_PK}#EVENTS`, sk: 'HEAD', type: 'event_log_head', position: '2' }),
      record('INSERT', { pk: `${MERCHANT_PK}#WEBHOOK#e1`, sk: 'DELIVERY#evt_1', type: 'webhook_delivery', status: 'succeeded' }),
      record('MODIFY', { ...endpoint('e1'), in_flight: 1 }, endpoint('e1')),
      record('MODIFY', { pk: `${MERCHANT_PK}#TOTALS`, sk: 'M#2026-03#EUR', type: 'merchant_totals', orders: 2 }),
      record('INSERT', { pk: MERCHANT_PK, sk: 'CUSTOMER#dan@example.com', type: 'customer' }),
      record('MODIFY', { pk: `${MERCHANT_PK}#QUOTA`, sk: 'live', tat_us: 2 }, { pk: `${MERCHANT_PK}#QUOTA`, sk: 'live', tat_us: 1 }),
      record('REMOVE', undefined, storedOrder()),
    ];

    // Act
    const passed = (records: DynamoDBRecord[]) => records.map((change) => passesFilters(change, CHANGE_FEED_FILTERS));

    // Assess
    for (const change of reacting) expect(Object.keys(reactionsTo(change)).length).toBeGreaterThan(0);
    for (const change of idle) expect(reactionsTo(change)).toEqual({});
    expect(passed(reacting)).toEqual(reacting.map(() => true));
    expect(passed(idle)).toEqual(idle.map(() => false));
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
    expect(callsBesideEventLog(UpdateCommand)).toHaveLength(1);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, { Key: { pk: MERCHANT_PK, sk: 'CUSTOMER#dan@example.com' } });
  });

  it('counts the new orders it announced in one EMF line per read, each once: a version change and an order announced before are not counted', async () => {
    // Prepare
    const addMetric = vi.spyOn(metrics, 'addMetric');
    vi.spyOn(metrics, 'publishStoredMetrics').mockReturnValue(metrics);
    const changed = storedOrder({ uuid: '00000000-0000-4000-8000-000000000010', version: 2, total_shipping_value: 900 });
    const [a, b] = [1, 2].map((n) => record('INSERT', storedOrder({ uuid: `00000000-0000-4000-8000-00000000001${n}`, customer: null })));
    const records = [record('MODIFY', changed, { ...changed, version: 1 }), a, b] as DynamoDBRecord[];
    sqsMock
      .on(SendMessageBatchCommand)
      .callsFakeOnce(sqsBatchAnswer(['0', '1']))
      .callsFake(sqsBatchAnswer());

    // Act: the second order's announcement is refused, so the stream reads it again
    const first = await processChangeRecords(records);
    const again = await processChangeRecords(records.slice(2));

    // Assess
    expect([first, again]).toEqual([b?.dynamodb?.SequenceNumber, undefined]);
    expect(addMetric.mock.calls.map(([name, , value]) => `${name}=${value}`)).toEqual(['OrdersAccepted=1', 'OrdersAccepted=1']);
    vi.restoreAllMocks();
  });

  it('creates a customer the table does not hold yet and only reads one it holds, once per customer and batch', async () => {
    // Prepare: dan has ordered before; eve has not, and orders twice in this batch
    const customerQuery = (email: string) => ({
      KeyConditionExpression: 'pk = :pk AND sk = :sk',
      ExpressionAttributeValues: { ':pk': MERCHANT_PK, ':sk': `CUSTOMER#${email}` },
    });
    ddbMock.on(QueryCommand, customerQuery('dan@example.com')).resolves({ Items: [{ pk: MERCHANT_PK }] });
    const eve = { name: 'Eve', email: 'Eve@Example.com' };
    const orders = ['0a', '0b', '0c'].map((tail, index) =>
      storedOrder({ uuid: `00000000-0000-4000-8000-0000000000${tail}`, ...(index > 0 ? { customer: eve } : {}) }),
    );

    // Act
    const result = await runFeed(streamEvent(...orders.map((order) => record('INSERT', order))));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    const customerReads = callsBesideEventLog(QueryCommand).filter((call) =>
      String(call.args[0].input.ExpressionAttributeValues?.[':sk']).startsWith('CUSTOMER#'),
    );
    expect(customerReads.map((call) => call.args[0].input.ExpressionAttributeValues?.[':sk'])).toEqual([
      'CUSTOMER#dan@example.com',
      'CUSTOMER#eve@example.com',
    ]);
    expect(callsBesideEventLog(UpdateCommand).map((call) => call.args[0].input.Key)).toEqual([
      { pk: MERCHANT_PK, sk: 'CUSTOMER#eve@example.com' },
    ]);
  });

  it("sends each order event to every enabled endpoint that subscribes to it, reading the merchant's endpoints once", async () => {
    // Prepare
    const all = endpoint('e-all');
    const cancelsOnly = endpoint('e-cancels', { events: ['order.cancelled'] });
    const disabled = endpoint('e-off', { enabled: false });
    ddbMock.on(QueryCommand).resolves({ Items: [all, cancelsOnly, disabled] });
    const orders = ['0a', '0b'].map((tail) => storedOrder({ uuid: `00000000-0000-4000-8000-0000000000${tail}`, customer: null }));

    // Act
    const result = await runFeed(streamEvent(...orders.map((order) => record('INSERT', order))));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(batchMessagesSentTo(WEBHOOKS_QUEUE).map(({ body }) => [body.endpoint_uuid, body.event.id, body.attempt])).toEqual(
      orders.map((order) => ['e-all', `evt_${order.uuid}_v1`, 1]),
    );
    expect(callsBesideEventLog(QueryCommand)).toHaveLength(1);
  });

  it('sends the events of an endpoint not known to answer on the slow lane (new, or unanswered lately), and the others on the lane of endpoints that answer', async () => {
    // Prepare: a new endpoint, one whose last delivery went unanswered for a moment (not held any more), one that answers
    const fresh = endpoint('e-new', { fast_at: undefined });
    const hanging = endpoint('e-slow', { fast_at: undefined, slow_at: new Date(Date.now() - 60_000).toISOString() });
    ddbMock.on(QueryCommand).resolves({ Items: [fresh, hanging, endpoint('e-fast')] });
    const order = storedOrder({ uuid: '00000000-0000-4000-8000-0000000000e1', customer: null });

    // Act
    const result = await runFeed(streamEvent(record('INSERT', order)));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(batchMessagesSentTo(WEBHOOKS_QUEUE).map(({ body }) => body.endpoint_uuid)).toEqual(['e-fast']);
    expect(batchMessagesSentTo(SLOW_WEBHOOKS_QUEUE).map(({ body }) => [body.endpoint_uuid, body.slow])).toEqual([
      ['e-new', true],
      ['e-slow', true],
    ]);
  });

  it('records the events of an endpoint the service disabled as failed deliveries, for recover to send once it is enabled again', async () => {
    // Prepare: one endpoint disabled by a 410 an hour ago, one by the merchant, one by the service long ago.
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const gone = endpoint('e-gone', { enabled: false, disabled_reason: 'it answered 410 Gone', disabled_at: hourAgo });
    const paused = endpoint('e-paused', { enabled: false, updated_at: hourAgo });
    const long = endpoint('e-long', { enabled: false, disabled_reason: 'it answered 410 Gone', disabled_at: '2026-01-01T00:00:00.000Z' });
    ddbMock.on(QueryCommand).resolves({ Items: [gone, paused, long] });
    const order = storedOrder({ uuid: '00000000-0000-4000-8000-00000000000a', customer: null });

    // Act
    const result = await runFeed(streamEvent(record('INSERT', order)));

    // Assess: one failed delivery of e-gone, on its failed list; nothing queued, nothing for the others.
    expect(result).toEqual({ batchItemFailures: [] });
    const deliveries = ddbMock
      .commandCalls(UpdateCommand)
      .map((call) => call.args[0].input)
      .filter((input) => String(input.Key?.sk).startsWith('WHDELIVERY#'));
    expect(
      deliveries.map((input) => [
        input.Key?.sk,
        input.ExpressionAttributeValues?.[':status'],
        input.ExpressionAttributeValues?.[':error'],
        input.ConditionExpression,
      ]),
    ).toEqual([[`WHDELIVERY#e-gone#evt_${order.uuid}_v1`, 'failed', 'The endpoint is disabled', 'attribute_not_exists(pk)']]);
    expect(batchMessagesSentTo(WEBHOOKS_QUEUE)).toEqual([]);
  });

  it('leaves a delivery the endpoint already has as it is when its record is read again after the disabling: recover does not send it twice', async () => {
    // Prepare: the event was delivered before the 410; the delivery exists, so the conditional record is refused.
    const gone = endpoint('e-gone', { enabled: false, disabled_reason: 'it answered 410 Gone', disabled_at: new Date().toISOString() });
    ddbMock.on(QueryCommand).resolves({ Items: [gone] });
    ddbMock.on(UpdateCommand).callsFake(async (input) => {
      if (String(input.Key?.sk).startsWith('WHDELIVERY#'))
        throw Object.assign(new Error('refused'), { name: 'ConditionalCheckFailedException' });
      return {};
    });
    const order = storedOrder({ uuid: '00000000-0000-4000-8000-00000000000b', customer: null });

    // Act
    const result = await runFeed(streamEvent(record('INSERT', order)));

    // Assess: done, nothing rewritten, nothing queued.
    expect(result).toEqual({ batchItemFailures: [] });
    expect(batchMessagesSentTo(WEBHOOKS_QUEUE)).toEqual([]);
  });

  it("parks a held endpoint's events for it at once (failing or hanging), with a keeper for a new backlog, instead of queueing them", async () => {
    // Prepare: one endpoint rests after failures, with nothing parked yet; the note on it is taken
    const retryAt = new Date(Date.now() + 600_000).toISOString();
    ddbMock.on(QueryCommand).resolves({ Items: [endpoint('e-failing', { failing_since: '2026-03-01T10:00:00.000Z', retry_at: retryAt })] });
    ddbMock.on(UpdateCommand, { Key: { pk: MERCHANT_PK, sk: 'WEBHOOK#e-failing' } }).resolves({ Attributes: {} });
    const orders = ['0a', '0b'].map((tail) => storedOrder({ uuid: `00000000-0000-4000-8000-0000000000${tail}`, customer: null }));

    // Act
    const result = await runFeed(streamEvent(...orders.map((order) => record('INSERT', order))));

    // Assess: both parked (filed under the event's time) and noted on the endpoint at once; only the keeper is queued
    expect(result).toEqual({ batchItemFailures: [] });
    const parks = ddbMock
      .commandCalls(BatchWriteCommand)
      .flatMap((call) => Object.values(call.args[0].input.RequestItems ?? {}).flat())
      .flatMap((request) => {
        const item = request.PutRequest?.Item;
        return item?.type === 'webhook_waiting' ? [item] : [];
      });
    expect(parks.map((item) => JSON.parse(String(item.message)).event.id)).toEqual(orders.map((order) => `evt_${order.uuid}_v1`));
    expect(parks.every((item) => String(item.sk).startsWith('WHWAIT#e-failing#'))).toBe(true);
    const noted = ddbMock.commandCalls(UpdateCommand).find((call) => String(call.args[0].input.UpdateExpression).startsWith('SET waiting'));
    expect(noted?.args[0].input.ExpressionAttributeValues?.[':count']).toBe(2);
    const queued = batchMessagesSentTo(WEBHOOKS_QUEUE);
    expect(queued.map(({ body }) => [body.wake, body.keep, body.not_before])).toEqual([[true, true, retryAt]]);
  });

  it("sends a short rest's events delayed to its end instead of parking them, and parks a hanging endpoint's", async () => {
    // Prepare: one endpoint rests 10 s after a failure (a flapping endpoint); another has a delivery hanging
    const retryAt = new Date(Date.now() + 10_000).toISOString();
    const slowUntil = new Date(Date.now() + 15_000).toISOString();
    ddbMock.on(QueryCommand).resolves({
      Items: [
        endpoint('e-resting', { failing_since: '2026-03-01T10:00:00.000Z', retry_at: retryAt }),
        endpoint('e-hanging', { slow_until: slowUntil }),
      ],
    });
    ddbMock.on(UpdateCommand, { Key: { pk: MERCHANT_PK, sk: 'WEBHOOK#e-hanging' } }).resolves({ Attributes: {} });
    const order = storedOrder({ customer: null });

    // Act
    const result = await runFeed(streamEvent(record('INSERT', order)));

    // Assess: the resting one's event is queued for its rest's end; the hanging one's is parked (only its keeper queued)
    expect(result).toEqual({ batchItemFailures: [] });
    const queued = batchMessagesSentTo(WEBHOOKS_QUEUE);
    const resting = queued.filter(({ body }) => body.endpoint_uuid === 'e-resting');
    expect(resting.map(({ body }) => body.wake)).toEqual([undefined]);
    expect(Date.parse(resting[0]?.body.not_before)).toBeGreaterThanOrEqual(Date.parse(retryAt));
    const hanging = queued.filter(({ body }) => body.endpoint_uuid === 'e-hanging');
    expect(hanging.map(({ body }) => [body.wake, body.keep])).toEqual([[true, true]]);
  });

  it("sends a held endpoint's events at once when its hold ended before they were noted, and delayed to its end when they could not be parked", async () => {
    // Prepare: two held endpoints with backlogs; one's hold has just ended (the note is refused), the other's parks are refused by the table
    const retryAt = new Date(Date.now() + 600_000).toISOString();
    const held = { failing_since: '2026-03-01T10:00:00.000Z', retry_at: retryAt, waiting: 3 };
    ddbMock.on(QueryCommand).resolves({ Items: [endpoint('e-ended', held), endpoint('e-refused', held)] });
    ddbMock.on(UpdateCommand, { Key: { pk: MERCHANT_PK, sk: 'WEBHOOK#e-ended' } }).rejects(conditionFailed());
    ddbMock
      .on(BatchWriteCommand)
      .callsFake(async (input: { RequestItems: Record<string, { PutRequest?: { Item: { sk: string } } }[]> }) => {
        const refused = Object.values(input.RequestItems)
          .flat()
          .some((request) => request.PutRequest?.Item.sk.startsWith('WHWAIT#e-refused#'));
        if (refused) throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
        return {};
      });
    const order = storedOrder({ customer: null });

    // Act
    const result = await runFeed(streamEvent(record('INSERT', order)));

    // Assess: nothing is lost; the ended one's event goes now, the refused one's waits for the hold
    expect(result).toEqual({ batchItemFailures: [] });
    const queued = batchMessagesSentTo(WEBHOOKS_QUEUE);
    expect(queued.map(({ body }) => [body.endpoint_uuid, body.event.id, body.wake])).toEqual([
      ['e-ended', `evt_${order.uuid}_v1`, undefined],
      ['e-refused', `evt_${order.uuid}_v1`, undefined],
    ]);
    expect(queued[0]?.body.not_before).toBeUndefined();
    expect(Date.parse(queued[1]?.body.not_before)).toBeGreaterThanOrEqual(Date.parse(retryAt));
  });

  it("reports a record whose merchant's webhook endpoints could not be read, so it is read again", async () => {
    // Prepare
    ddbMock.on(QueryCommand).rejects(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }));
    const order = record('INSERT', storedOrder({ customer: null }));

    // Act
    const result = await runFeed(streamEvent(order));

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: order.dynamodb?.SequenceNumber }] });
    expect(batchMessagesSentTo(ORDERS_QUEUE)).toHaveLength(1);
  });

  it("does not send a merchant's webhook events again when the batch is read again for another merchant's failing record", async () => {
    // Prepare: the other merchant's order first, whose endpoints cannot be read the first time
    const otherPk = `M#${OTHER_MERCHANT_ID}`;
    let othersDown = true;
    ddbMock.on(QueryCommand).callsFake(async (input: QueryCommandInput) => {
      if (String(input.ExpressionAttributeValues?.[':pk']).startsWith(otherPk) && othersDown)
        throw Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' });
      const pk = String(input.ExpressionAttributeValues?.[':pk']);
      return { Items: pk === MERCHANT_PK ? [endpoint('e-own')] : pk === otherPk ? [endpoint('e-other', { pk: otherPk })] : [] };
    });
    const failing = record('INSERT', storedOrder({ pk: otherPk, uuid: '00000000-0000-4000-8000-0000000000f1', customer: null }));
    const behind = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-0000000000f2', customer: null }));

    // Act: the stream reads the batch again from the failed record, which fails once more before it passes
    const first = await runFeed(streamEvent(failing, behind));
    const second = await runFeed(streamEvent(failing, behind));
    othersDown = false;
    const third = await runFeed(streamEvent(failing, behind));

    // Assess: each event went to its endpoint once
    const failedAt = { batchItemFailures: [{ itemIdentifier: failing.dynamodb?.SequenceNumber }] };
    expect([first, second, third]).toEqual([failedAt, failedAt, { batchItemFailures: [] }]);
    expect(
      batchMessagesSentTo(WEBHOOKS_QUEUE)
        .map(({ body }) => body.endpoint_uuid)
        .sort(),
    ).toEqual(['e-other', 'e-own']);
    expect(batchMessagesSentTo(ORDERS_QUEUE).map(({ body }) => body.order_uuid)).toEqual([
      '00000000-0000-4000-8000-0000000000f1',
      '00000000-0000-4000-8000-0000000000f2',
    ]);
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
    // Prepare: two changes in one block, one in another block of the same group, which the orders' sequence has left
    const block = (n: number, v: number, sk = 'orders#all#00000000') => ({ pk: `${MERCHANT_PK}#COUNTS`, sk, type: 'list_count', n, v });
    ddbMock.on(QueryCommand).resolves({ Items: [block(2, 2), block(1, 1, 'orders#all#00000001')] });
    sequenceAt(GROUP_SIZE * BLOCK_SIZE);

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
    expect(callsBesideEventLog(QueryCommand).map((call) => call.args[0].input.ConsistentRead)).toEqual([true, true, true]);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#G#00000000' },
      ExpressionAttributeValues: expect.objectContaining({ ':n': 3, ':vs': 3 }),
    });
  });

  it("refreshes the group totals of the other lists without reading the orders' sequence", async () => {
    // Prepare
    const invites = { pk: `${MERCHANT_PK}#COUNTS`, sk: 'invites#all#00000000', type: 'list_count', n: 2, v: 2 };
    ddbMock.on(QueryCommand).resolves({ Items: [{ n: 3, v: 3 }] });

    // Act
    const result = await runFeed(streamEvent(record('MODIFY', { ...invites, n: 3, v: 3 }, invites)));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(totalsWritten()).toEqual(['invites#all#G#00000000']);
    const sequenceReads = ddbMock
      .commandCalls(QueryCommand)
      .filter((call) => ['COUNTER#orders', 'QUOTA'].includes(String(call.args[0].input.ExpressionAttributeValues?.[':sk'])));
    expect(sequenceReads).toEqual([]);
  });

  it("leaves the total of the orders' open group alone (a page counts that group from its blocks) and refreshes it as the sequence leaves it", async () => {
    // Prepare: the sequence is in group 0
    const block = { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000003', type: 'list_count', n: 7, v: 7 };
    const invites = { ...block, sk: 'invites#all#00000000' };
    const counter = { pk: `${MERCHANT_PK}#QUOTA`, sk: 'QUOTA', seq_taken: true, orders_seq: GROUP_SIZE * BLOCK_SIZE - 1 };
    ddbMock.on(QueryCommand).resolves({ Items: [{ sk: 'orders#all#00000003', n: 8, v: 8 }] });
    sequenceAt(counter.orders_seq);

    // Act
    const open = await runFeed(
      streamEvent(record('MODIFY', { ...block, n: 8, v: 8 }, block), record('MODIFY', { ...invites, n: 8, v: 8 }, invites)),
    );
    const openTotals = totalsWritten();
    sequenceAt(counter.orders_seq + 1);
    const left = await runFeed(streamEvent(record('MODIFY', { ...counter, orders_seq: counter.orders_seq + 1 }, counter)));

    // Assess
    expect([open, left]).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    expect(openTotals).toEqual(['invites#all#G#00000000']);
    expect(totalsWritten()).toEqual(['invites#all#G#00000000', 'orders#all#G#00000000']);
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

  it("sends the recount of an order block that the quota item's order sequence moved past, as for the older counter", async () => {
    // Prepare
    const quota = { pk: `${MERCHANT_PK}#QUOTA`, sk: 'QUOTA', tat_us: 1, orders_seq: 511, seq_taken: true };

    // Act
    const result = await runFeed(streamEvent(record('MODIFY', { ...quota, tat_us: 2, orders_seq: 512 }, quota)));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(batchMessagesSentTo(FOLLOW_UPS_QUEUE)).toEqual([
      { body: { kind: 'recount', key: { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000001' }, due: expect.any(String) }, delay: 60 },
    ]);
  });

  it('sends, for each derived block a take took numbers in, the settling of those numbers, delayed until they settled', async () => {
    // Prepare: counts derive from number 300 on; the take moves the sequence from 509 across a block's end to 514.
    const quota = { pk: `${MERCHANT_PK}#QUOTA`, sk: 'QUOTA', tat_us: 1, orders_seq: 509, orders_derived_from: 300, seq_taken: true };
    const taken = record('MODIFY', { ...quota, tat_us: 2, orders_seq: 514 }, quota);
    const below = record(
      'MODIFY',
      { ...quota, tat_us: 2, orders_seq: 514, orders_derived_from: 600 },
      { ...quota, orders_derived_from: 600 },
    );

    // Act
    const result = await runFeed(streamEvent(taken));
    const plannedBelowDerived = reactionsTo(below).followUps ?? [];

    // Assess: the closed block's recount, and the settling of 510-511 and of 512-514 a minute after the take.
    expect(result).toEqual({ batchItemFailures: [] });
    const due = new Date(Date.parse(reactionsTo(taken).followUps?.[0]?.due ?? '') + 60_000).toISOString();
    expect(batchMessagesSentTo(FOLLOW_UPS_QUEUE)).toEqual([
      { body: { kind: 'recount', key: { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000001' }, due: expect.any(String) }, delay: 60 },
      {
        body: { kind: 'settle', key: { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000001' }, due, first: 510, last: 511 },
        delay: expect.any(Number),
      },
      {
        body: { kind: 'settle', key: { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000002' }, due, first: 512, last: 514 },
        delay: expect.any(Number),
      },
    ]);
    expect(plannedBelowDerived.filter((followUp) => followUp.kind === 'settle')).toEqual([]);
  });

  it("plans neither settling nor a recount for an import's take (the seed's), which writes its orders and totals itself", () => {
    // Prepare: the seed takes 700 numbers at once and leaves the take unmarked; it writes its orders for minutes after.
    const quota = { pk: `${MERCHANT_PK}#QUOTA`, sk: 'QUOTA', tat_us: 1, orders_seq: 299, orders_derived_from: 300 };

    // Act
    const reactions = reactionsTo(record('MODIFY', { ...quota, orders_seq: 999 }, quota));

    // Assess
    expect(reactions).toEqual({});
  });

  it('sends no settling for a take whose numbers all name orders on the list index by the time the feed reads it', async () => {
    // Prepare: the take moves the sequence from 509 to 511 in a derived block; the index names 510 and 511.
    const quota = { pk: `${MERCHANT_PK}#QUOTA`, sk: 'QUOTA', tat_us: 1, orders_seq: 509, orders_derived_from: 300, seq_taken: true };
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolves({ Items: [{ gsi1sk: '000000000510' }, { gsi1sk: '000000000511' }] });

    // Act
    const result = await runFeed(streamEvent(record('MODIFY', { ...quota, tat_us: 2, orders_seq: 511 }, quota)));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi1',
      ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#orders#all`, ':first': '000000000510', ':last': '000000000511' },
    });
    expect(batchMessagesSentTo(FOLLOW_UPS_QUEUE)).toEqual([]);
  });

  it('reads the open group of the orders from their older counter while the quota item holds no sequence', async () => {
    // Prepare: the quota item has no orders_seq; the older counter is in group 1
    const block = { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000003', type: 'list_count', n: 7, v: 7 };
    ddbMock.on(QueryCommand).resolves({ Items: [{ sk: 'orders#all#00000003', n: 8, v: 8 }] });
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#QUOTA`, ':sk': 'QUOTA' } })
      .resolves({ Items: [{ tat_us: 1 }] });
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': MERCHANT_PK, ':sk': 'COUNTER#orders' } })
      .resolves({ Items: [{ pk: MERCHANT_PK, sk: 'COUNTER#orders', seq: GROUP_SIZE * BLOCK_SIZE }] });

    // Act
    const result = await runFeed(streamEvent(record('MODIFY', { ...block, n: 8, v: 8 }, block)));

    // Assess: group 0 is closed, so its total is refreshed
    expect(result).toEqual({ batchItemFailures: [] });
    expect(totalsWritten()).toEqual(['orders#all#G#00000000']);
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
      MessageBody: JSON.stringify(poison).replace(/[\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`),
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

/** Every SendMessageBatch call to `queueUrl`: its entries' bodies as sent. */
const batchesSentTo = (queueUrl: string) =>
  sqsMock
    .commandCalls(SendMessageBatchCommand)
    .filter((call) => call.args[0].input.QueueUrl === queueUrl)
    .map((call) => (call.args[0].input.Entries ?? []).map((entry) => entry.MessageBody ?? ''));

/** An order of `rows` rows whose product names are `name`. */
const orderWithRows = (uuid: string, rows: number, name: string) =>
  storedOrder({
    uuid,
    customer: null,
    order_rows: Array.from({ length: rows }, (_, index) => ({
      uuid: `9d8c7b6a-5f4e-4d3c-8b2a-${String(index).padStart(12, '0')}`,
      product_sku: null,
      product_name: name,
      segment_slug: null,
      price_value: 100,
      tax_value: null,
      quantity: 1,
    })),
  });

describe('what the change feed sends, whatever an order holds', () => {
  it('writes characters SQS refuses (U+FFFE, U+FFFF, outside the BMP) as JSON escapes that read back to the same text', async () => {
    // Prepare
    const name = 'Tent \u{1F3D5}\uFFFE\uFFFF é';
    ddbMock.on(QueryCommand).resolves({ Items: [endpoint('e-all')] });
    const order = orderWithRows('00000000-0000-4000-8000-0000000000f1', 1, name);

    // Act
    const result = await runFeed(streamEvent(record('INSERT', order)));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    const bodies = [...batchesSentTo(ORDERS_QUEUE), ...batchesSentTo(WEBHOOKS_QUEUE)].flat();
    expect(bodies).toHaveLength(2);
    for (const body of bodies) expect(body).toMatch(/^[\t\n\r\u0020-\ud7ff\ue000-\ufffd]*$/);
    const delivery = JSON.parse(bodies[1] as string);
    expect(delivery.event.data.order.order_rows[0].product_name).toBe(name);
  });

  it('sends order events without the order: the commission consumer reads it, so the message stays small', async () => {
    // Prepare
    const order = orderWithRows('00000000-0000-4000-8000-0000000000f2', 200, 'x'.repeat(255));

    // Act
    await runFeed(streamEvent(record('INSERT', order)));

    // Assess
    const [message] = batchMessagesSentTo(ORDERS_QUEUE);
    expect(message?.body).toEqual({
      id: `evt_${order.uuid}_v1`,
      type: 'order.created',
      timestamp: order.updated_at,
      merchant_id: expect.any(String),
      order_uuid: order.uuid,
      version: 1,
    });
  });

  it('bounds every batch by bytes as well as count, so large events to many endpoints are all sent', async () => {
    // Prepare: six endpoints, ten orders of about 60 KB each.
    ddbMock.on(QueryCommand).resolves({ Items: ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => endpoint(`e-${id}`)) });
    const records = Array.from({ length: 10 }, (_, index) =>
      record('INSERT', orderWithRows(`00000000-0000-4000-8000-0000000001${String(index).padStart(2, '0')}`, 200, 'y'.repeat(250))),
    );

    // Act
    const result = await runFeed(streamEvent(...records));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    const batches = batchesSentTo(WEBHOOKS_QUEUE);
    expect(batches.flat()).toHaveLength(60);
    for (const batch of batches) {
      expect(batch.length).toBeLessThanOrEqual(10);
      expect(batch.reduce((sum, body) => sum + Buffer.byteLength(body), 0)).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    }
  });

  it("stores an event too large for a message once in the merchant's table space, however many endpoints get it, and sends a reference that reads back to it", async () => {
    // Prepare: 200 rows of 255 characters outside the BMP, about 600 KB once escaped; three endpoints.
    ddbMock.on(QueryCommand).resolves({ Items: [endpoint('e-a'), endpoint('e-b'), endpoint('e-c')] });
    ddbMock.on(PutCommand).resolves({});
    const order = orderWithRows('00000000-0000-4000-8000-0000000000f3', 200, '\u{1F600}'.repeat(255));

    // Act
    const result = await runFeed(streamEvent(record('INSERT', order)));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    const bodies = batchesSentTo(WEBHOOKS_QUEUE)
      .flat()
      .map((body) => JSON.parse(body as string));
    expect(bodies.map((body) => body.endpoint_uuid).sort()).toEqual(['e-a', 'e-b', 'e-c']);
    const ref = { merchant_id: MERCHANT.id, sha256: expect.any(String), bytes: expect.any(Number) };
    for (const body of bodies) expect(body).toEqual(expect.objectContaining({ event_ref: ref, attempt: 1 }));
    for (const body of bodies) expect(body).not.toHaveProperty('event');
    expect(new Set(bodies.map((body) => body.event_ref.sha256)).size).toBe(1);
    const puts = callsBesideEventLog(PutCommand).map((call) => (call.args[0].input as { Item?: Record<string, unknown> }).Item ?? {});
    // One event stored once (its JSON, unescaped: about 200 KB, one chunk), not once per endpoint.
    expect(puts.map((item) => item.sk)).toEqual(['0000']);
    expect(puts.every((item) => String(item.pk).startsWith(`${MERCHANT_PK}#PAYLOAD#`))).toBe(true);
    ddbMock.on(QueryCommand).resolves({ Items: puts });
    const delivery = await readDeliveryMessage({ ddb: ddbMock as never, table: 'unit-table' }, JSON.stringify(bodies[0]));
    const sent = delivery?.event.data.order as { uuid: string; order_rows: { product_name: string }[] } | undefined;
    expect(sent?.uuid).toBe(order.uuid);
    expect(sent?.order_rows[199]?.product_name).toBe('\u{1F600}'.repeat(255));
    expect(delivery?.event_ref).toEqual(bodies[0].event_ref);
  });

  it('sends a delivery that already carries its stored event on by reference, storing nothing again (a retry, a release)', async () => {
    // Prepare
    const ref = { merchant_id: MERCHANT.id, sha256: 'abc', bytes: 600_000 };
    const event = { id: 'evt_big', type: 'order.created' as const, timestamp: 'T', data: { order: { notes: 'x'.repeat(300_000) } } };

    // Act
    await sendDeliveries({ ddb: ddbMock as never, table: 'unit-table' }, [
      { merchant_id: MERCHANT.id, endpoint_uuid: 'e-a', event, attempt: 3, event_ref: ref },
    ]);

    // Assess
    expect(ddbMock).not.toHaveReceivedCommand(PutCommand);
    expect(
      batchesSentTo(WEBHOOKS_QUEUE)
        .flat()
        .map((body) => JSON.parse(body as string)),
    ).toEqual([{ merchant_id: MERCHANT.id, endpoint_uuid: 'e-a', attempt: 3, event_ref: ref }]);
  });
});

describe('a change record that keeps failing', () => {
  it('is read again until it has failed for the park policy, then parked with its content while the records behind it go on', async () => {
    // Prepare: the orders queue refuses the first record's event every time, and takes the second's.
    sqsMock.on(SendMessageBatchCommand).callsFake(async (input) => {
      const refused = (input.Entries ?? []).filter((entry: { MessageBody?: string }) => entry.MessageBody?.includes('0000000000a1'));
      return {
        Successful: (input.Entries ?? [])
          .filter((entry: { Id?: string }) => !refused.includes(entry))
          .map((entry: { Id?: string }) => ({ Id: entry.Id })),
        Failed: refused.map((entry: { Id?: string }) => ({ Id: entry.Id, Code: 'InternalError', SenderFault: false })),
      };
    });
    const stuck = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-0000000000a1', customer: null }));
    const behind = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-0000000000a2', customer: null }));
    const start = Date.parse('2026-11-25T10:00:00Z');

    // Act: one try per second, as the stream's retries would.
    const answers: (string | undefined)[] = [];
    for (let attempt = 0; attempt <= DEFAULT_PARK_POLICY.seconds; attempt += 1) {
      answers.push(await processChangeRecords([stuck, behind], start + attempt * 1000));
    }

    // Assess
    expect(answers.slice(0, -1)).toEqual(answers.slice(0, -1).map(() => stuck.dynamodb?.SequenceNumber));
    expect(answers.at(-1)).toBeUndefined();
    expect(sqsMock).toHaveReceivedCommandTimes(SendMessageCommand, 1);
    const parked = sqsMock.commandCalls(SendMessageCommand)[0]?.args[0].input;
    expect(parked?.QueueUrl).toBe(PARKED_QUEUE);
    expect(JSON.parse(parked?.MessageBody ?? '{}')).toEqual(stuck);
    expect(parked?.MessageAttributes?.dead_letter_error?.StringValue).toBe('ReactionsKeptFailing');
  });

  it('keeps failing, and is parked later, when the parked queue refuses it: its reactions are not forgotten', async () => {
    // Prepare: the orders queue refuses the record's event, and the parked queue refuses it once
    sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer([]));
    let parkAnswers = 0;
    sqsMock.on(SendMessageCommand).callsFake(async () => {
      parkAnswers += 1;
      if (parkAnswers === 1) throw Object.assign(new Error('refused'), { name: 'AccessDenied' });
      return { MessageId: 'parked-1' };
    });
    const stuck = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-0000000000b1', customer: null }));
    const start = Date.parse('2026-11-25T12:00:00Z');

    // Act: tries past the policy; the first park is refused, the next one taken
    const answers: (string | undefined)[] = [];
    for (let attempt = 0; attempt <= DEFAULT_PARK_POLICY.seconds + 1; attempt += 1)
      answers.push(await processChangeRecords([stuck], start + attempt * 1000));

    // Assess: after the refused park it is tried again (its event sent again), then parked
    expect(answers.slice(0, -1)).toEqual(answers.slice(0, -1).map(() => stuck.dynamodb?.SequenceNumber));
    expect(answers.at(-1)).toBeUndefined();
    expect(batchMessagesSentTo(ORDERS_QUEUE)).toHaveLength(answers.length);
    expect(parkAnswers).toBe(2);
  });

  it('is parked once, though a record before it keeps the batch coming back', async () => {
    // Prepare: the second record cannot be read; the first's event is refused every time
    sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer([]));
    const failing = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-0000000000b2', customer: null }));
    const unreadable = record('INSERT', { pk: MERCHANT_PK, sk: 'ORDER#broken', type: 'order', uuid: 'broken' });

    // Act
    await processChangeRecords([failing, unreadable]);
    await processChangeRecords([failing, unreadable]);

    // Assess
    expect(sqsMock.commandCalls(SendMessageCommand).filter((call) => call.args[0].input.QueueUrl === PARKED_QUEUE)).toHaveLength(1);
  });

  it('is counted as failing when its reactions hang past the deadline before the timeout, and parked like one, instead of timing the batch out', async () => {
    // Prepare: the orders queue never answers; the function has 150 ms left
    sqsMock.on(SendMessageBatchCommand).callsFake(() => new Promise(() => {}));
    const hanging = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-0000000000a4', customer: null }));
    const start = Date.parse('2026-11-25T13:00:00Z');

    // Act: one read a second
    const answers: (string | undefined)[] = [];
    for (let attempt = 0; attempt <= DEFAULT_PARK_POLICY.seconds; attempt += 1) {
      answers.push(await processChangeRecords([hanging], start + attempt * 1000, 150));
    }

    // Assess: read again from it until the policy, then parked
    expect(answers.slice(0, -1)).toEqual(answers.slice(0, -1).map(() => hanging.dynamodb?.SequenceNumber));
    expect(answers.at(-1)).toBeUndefined();
    const parked = sqsMock.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(parked.map((input) => input.QueueUrl)).toEqual([PARKED_QUEUE]);
    expect(parked[0]?.MessageAttributes?.dead_letter_error?.StringValue).toBe('ReactionsKeptFailing');
  });

  it('is not parked for a brief outage: fewer seconds than the policy, however many tries', async () => {
    // Prepare
    sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer([]));
    const stuck = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-0000000000a3', customer: null }));
    const start = Date.parse('2026-11-25T11:00:00Z');

    // Act
    for (let attempt = 0; attempt < 50; attempt += 1) await processChangeRecords([stuck], start + attempt * 100);
    sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer());
    const after = await processChangeRecords([stuck], start + 5_100);

    // Assess
    expect(after).toBeUndefined();
    expect(sqsMock).toHaveReceivedCommandTimes(SendMessageCommand, 0);
  });
});

describe('a merchant whose records keep failing', () => {
  /** The orders queue refuses the events of merchant `failing` and takes every other's. */
  const refuseEventsOf = (failing: string) =>
    sqsMock.on(SendMessageBatchCommand).callsFake(async (input) => {
      const entries = (input.Entries ?? []) as { Id?: string; MessageBody?: string }[];
      return sqsBatchAnswer(entries.filter((entry) => !entry.MessageBody?.includes(failing)).map((entry) => entry.Id as string))(input);
    });
  const orderOf = (merchantId: string, uuid: string) =>
    record('INSERT', storedOrder({ pk: `M#${merchantId}`, uuid: `00000000-0000-4000-8000-${uuid}`, customer: null }));
  /** Reads `failing`'s record beside another merchant's, a second apart, until it is parked for the whole policy. */
  const parkOneOf = async (failing: string, start: number, [own, others]: [string, string]) => {
    const first = [orderOf(failing, own), orderOf(OTHER_MERCHANT_ID, others)];
    let seconds = 0;
    while ((await processChangeRecords(first, start + seconds * 1000)) !== undefined) seconds += 1;
    return { first, seconds };
  };
  const parkedIds = () =>
    sqsMock
      .commandCalls(SendMessageCommand)
      .filter((call) => call.args[0].input.QueueUrl === PARKED_QUEUE)
      .map((call) => (JSON.parse(call.args[0].input.MessageBody ?? '{}') as DynamoDBRecord).eventID);

  it("holds another merchant's records for the park policy once, not once per failing record: its next failing record is parked at once", async () => {
    // Prepare: merchant F's events are refused; one of its records failed for the whole policy and was parked
    const failing = 'f0f0f0f0-0000-4000-8000-00000000000f';
    refuseEventsOf(failing);
    const start = Date.parse('2026-11-25T14:00:00Z');
    const { first, seconds } = await parkOneOf(failing, start, ['0000000000c1', '0000000000c2']);
    const next = [orderOf(failing, '0000000000c3'), orderOf(OTHER_MERCHANT_ID, '0000000000c4')];

    // Act: the next batch, one second later
    const answer = await processChangeRecords(next, start + (seconds + 1) * 1000);

    // Assess: read once, F's record parked, the other merchant's event sent
    expect(seconds).toBe(DEFAULT_PARK_POLICY.seconds);
    expect(answer).toBeUndefined();
    expect(parkedIds()).toEqual([first[0]?.eventID, next[0]?.eventID]);
    expect(batchMessagesSentTo(ORDERS_QUEUE).map(({ body }) => body.order_uuid)).toContain('00000000-0000-4000-8000-0000000000c4');
  });

  it('parks nothing at once behind another failing record, which holds the shard anyway (an outage every merchant shares)', async () => {
    // Prepare: merchant H had a record parked; now another merchant's record fails first, then H's, then one goes through
    const failing = 'f2f2f2f2-0000-4000-8000-00000000000f';
    const other = 'f3f3f3f3-0000-4000-8000-00000000000f';
    sqsMock.on(SendMessageBatchCommand).callsFake(async (input) => {
      const entries = (input.Entries ?? []) as { Id?: string; MessageBody?: string }[];
      const refused = (entry: { MessageBody?: string }) => entry.MessageBody?.includes(failing) || entry.MessageBody?.includes(other);
      return sqsBatchAnswer(entries.filter((entry) => !refused(entry)).map((entry) => entry.Id as string))(input);
    });
    const start = Date.parse('2026-11-25T16:00:00Z');
    const { first, seconds } = await parkOneOf(failing, start, ['0000000000e1', '0000000000e2']);
    const next = [orderOf(other, '0000000000e3'), orderOf(failing, '0000000000e4'), orderOf(OTHER_MERCHANT_ID, '0000000000e5')];

    // Act
    const answer = await processChangeRecords(next, start + (seconds + 1) * 1000);

    // Assess: read again from the other merchant's record; H's not parked
    expect(answer).toBe(next[0]?.dynamodb?.SequenceNumber);
    expect(parkedIds()).toEqual([first[0]?.eventID]);
  });

  it('gives its failing record the whole policy again once one of its records went through, and while no other merchant waits behind it', async () => {
    // Prepare: merchant G had a record parked
    const failing = 'f1f1f1f1-0000-4000-8000-00000000000f';
    refuseEventsOf(failing);
    const start = Date.parse('2026-11-25T15:00:00Z');
    const { first, seconds } = await parkOneOf(failing, start, ['0000000000d1', '0000000000d2']);

    // Act: a record of G alone; then one of G that goes through, and one of G that fails beside another merchant's
    const alone = orderOf(failing, '0000000000d3');
    const aloneAnswer = await processChangeRecords([alone], start + (seconds + 1) * 1000);
    sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer());
    await processChangeRecords([alone], start + (seconds + 2) * 1000);
    refuseEventsOf(failing);
    const later = [orderOf(failing, '0000000000d5'), orderOf(OTHER_MERCHANT_ID, '0000000000d6')];
    const laterAnswer = await processChangeRecords(later, start + (seconds + 3) * 1000);

    // Assess: neither was parked at once
    expect(aloneAnswer).toBe(alone.dynamodb?.SequenceNumber);
    expect(laterAnswer).toBe(later[0]?.dynamodb?.SequenceNumber);
    expect(parkedIds()).toEqual([first[0]?.eventID]);
  });
});

describe('fairness between merchants on the queues', () => {
  it("names each message's merchant as its MessageGroupId, so SQS's fair queues keep one merchant's backlog from delaying another's", async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolves({ Items: [endpoint('e-all')] });
    const order = storedOrder({ uuid: '00000000-0000-4000-8000-0000000000c1', customer: null });

    // Act
    await runFeed(streamEvent(record('INSERT', order)));

    // Assess
    const entries = sqsMock.commandCalls(SendMessageBatchCommand).flatMap((call) => call.args[0].input.Entries ?? []);
    expect(entries).toHaveLength(2);
    expect(entries.map((entry) => entry.MessageGroupId)).toEqual([MERCHANT.id, MERCHANT.id]);
  });
});

describe('a repeatable write of the change feed that fails once', () => {
  it('is tried again in the same invocation, so one lost answer does not send the batch back to be read again', async () => {
    // Prepare: the first UpdateItem's answer is lost (a timeout); every later one goes through.
    ddbMock
      .on(UpdateCommand)
      .rejectsOnce(Object.assign(new Error('Request did not complete within 2000 ms'), { name: 'TimeoutError' }))
      .resolves({});
    const order = record('INSERT', storedOrder({ uuid: '00000000-0000-4000-8000-0000000000d1' }));

    // Act
    const result = await runFeed(streamEvent(order));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    // The customer's upsert, and again after its answer was lost.
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 2);
  });
});
