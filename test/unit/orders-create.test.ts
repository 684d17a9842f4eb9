import { SendMessageBatchCommand, type SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import {
  BatchWriteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as changeFeed } from '#functions/changes/feed';
import { handler as createV2 } from '#functions/orders/create';
import { handler as createLegacy } from '#functions/orders/create-legacy';
import { padSeq } from '#shared/db/entities/base';
import { BLOCK_SIZE, ORDER_SEQUENCE_GAP } from '#shared/db/entities/counter';
import { logger } from '#shared/logger';
import { apiEvent, expectV2Error, invoke, workerContext } from './support/api';
import { conditionFailed, ddbMock, resetAwsMocks, sqsMock } from './support/aws';
import {
  AFFILIATE_KEY,
  COUNTS_PK,
  derivedOrderUuid,
  MERCHANT,
  MERCHANT_KEY,
  MERCHANT_PK,
  ORDER_COUNTER_KEY,
  ORDER_PUT,
  ORDER_SEQUENCE_KEY,
  ORDERS_LIST_PK,
  orderBody,
  orderPuts,
  storedAffiliate,
  storedOrder,
  stubAuth,
  stubOrderCreate,
  stubOrderSequence,
  TOKENS,
  TRACE_ID,
  UUID,
} from './support/fixtures';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** The order_no guard an order stored before order keys were derived from order_no still has. */
const GUARD_KEY = { pk: MERCHANT_PK, sk: 'ORDER_NO#A-1001' };
/** The uuid every create of order_no A-1001 puts its order under. */
const A_1001_UUID = derivedOrderUuid('A-1001');
const CUSTOMER_KEY = { pk: MERCHANT_PK, sk: 'CUSTOMER#dan@example.com' };
/** The order that holds order_no A-1001 when a test says it is taken (another request's). */
const OTHER_ORDER_UUID = '0b1c2d3e-4f50-4617-8283-94a5b6c7d8e9';

const postV2 = (body: unknown) => invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body }));
const postLegacy = (body: unknown) => invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, body }));

/** The input of the n-th PutItem of an order. */
const orderPut = (call = 0) => orderPuts()[call]?.args[0].input;

/** A refusal of the order's put because an order holds its key: that order, as DynamoDB hands it back (ALL_OLD). */
const heldBy = (order: Record<string, unknown>) => conditionFailed(marshall(order, { removeUndefinedValues: true }));

/** Every table call, in the order they were made. */
const tableCalls = () =>
  ddbMock.calls().map((call) => ({ command: call.args[0].constructor.name, input: call.args[0].input as Record<string, unknown> }));
/** Position of the first call of `command` whose Key is `key` (any key when none is given). */
const positionOf = (command: string, key?: { pk: string; sk: string }) =>
  tableCalls().findIndex(
    (call) => call.command === command && (key === undefined || JSON.stringify(call.input.Key) === JSON.stringify(key)),
  );

/** The UpdateItem calls on `key`. */
const updatesOf = (key: { pk: string; sk: string }) => ddbMock.commandCalls(UpdateCommand, { Key: key });

/** The order list's block count item of a sequence number (256 numbers per block). */
/** Where a sequence derives its counts from when the tests' numbers lie below it: their blocks are counted by ADD. */
const COUNTED_BY_ADD_BELOW = 1 << 20;
const orderBlockKey = (block: number) => ({ pk: COUNTS_PK, sk: `orders#all#${String(block).padStart(8, '0')}` });

/** The UpdateItems that mark a block for recount (a RECOUNT entry on gsi2), by key. */
const recountMarks = () =>
  ddbMock
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input)
    .filter((input) => input.ExpressionAttributeValues?.[':workPartition'] === `${MERCHANT_PK}#RECOUNT`)
    .map((input) => input.Key);

/** The stream record DynamoDB writes for the creation of `item` (new image only), as Lambda delivers it. */
const insertEvent = (item: Record<string, unknown>): DynamoDBStreamEvent => ({
  Records: [
    {
      eventID: 'event-1',
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      dynamodb: {
        Keys: marshall({ pk: item.pk, sk: item.sk }) as never,
        NewImage: marshall(item, { removeUndefinedValues: true }) as never,
        SequenceNumber: '000000000000000000001',
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    },
  ],
});

/** SQS takes every entry of a batch. */
const acceptAll = async (input: SendMessageBatchCommandInput) => ({
  Successful: (input.Entries ?? []).map((entry) => ({ Id: entry.Id as string, MessageId: `msg-${entry.Id}`, MD5OfMessageBody: 'x' })),
  Failed: [],
});

beforeEach(() => {
  resetAwsMocks();
  // The change feed logs events with BatchWriteItem: all processed.
  ddbMock.on(BatchWriteCommand).resolves({});
  stubAuth();
  stubOrderCreate({ seq: 42 });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('POST /api/v2/orders/create', () => {
  it('answers 201 with the new order uuid and order_no in the V2 envelope', async () => {
    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.headers).toMatchObject({ 'content-type': 'application/json' });
    expect(response.body).toEqual({
      success: true,
      data: { order: { uuid: A_1001_UUID, order_no: 'A-1001' } },
      errors: null,
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
  });

  it('writes ONE conditional put of the order under the uuid derived from its order_no (with no gsi2 entry: nothing is owed after it), no transaction and no guard item', async () => {
    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    const uuid = response.body.data.order.uuid as string;
    expect(uuid).toBe(A_1001_UUID);
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(orderPuts()).toHaveLength(1);
    expect(ddbMock).toHaveReceivedCommandTimes(PutCommand, 1);
    expect(orderPut()).toEqual({
      TableName: 'unit-table',
      // Of racing creates with one order_no exactly one finds the key free; a refusal names the
      // holder, so a retry of this very create recognises its own order by the write id.
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      Item: {
        pk: MERCHANT_PK,
        sk: `ORDER#${uuid}`,
        gsi1pk: ORDERS_LIST_PK,
        gsi1sk: '000000000042',
        type: 'order',
        uuid,
        seq: 42,
        order_no: 'A-1001',
        affiliate_slug: 'alice',
        total_shipping_value: 495,
        currency_code: 'EUR',
        order_rows: [
          {
            uuid: expect.stringMatching(UUID),
            product_sku: 'TENT-2P',
            product_name: 'Tent',
            segment_slug: 'outdoor',
            price_value: 19900,
            tax_value: 3781,
            quantity: 1,
          },
          {
            uuid: expect.stringMatching(UUID),
            product_sku: null,
            product_name: 'Tent pegs',
            segment_slug: null,
            price_value: 500,
            tax_value: null,
            quantity: 4,
          },
        ],
        customer: { name: 'Dan Customer', email: 'Dan@Example.com' },
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        version: 1,
        last_write_id: expect.stringMatching(UUID),
        created_write_id: expect.stringMatching(UUID),
      },
    });
    expect(orderPut()?.Item).not.toHaveProperty('gsi2pk');
    expect(orderPut()?.Item).not.toHaveProperty('published_version');
  });

  it('writes nothing that other creates also write: its one put holds only its own order item, no counter, merchant, affiliate, customer, guard or count item', async () => {
    // Act
    await postV2(orderBody());

    // Assess
    expect(ddbMock.commandCalls(PutCommand).map((call) => call.args[0].input.Item?.sk)).toEqual([`ORDER#${A_1001_UUID}`]);
    expect(orderPut()?.Item?.pk).toBe(MERCHANT_PK);
    expect(JSON.stringify(orderPut())).not.toMatch(/COUNTER#|"MERCHANT"|AFFILIATE#|CUSTOMER#|ORDER_NO#|#COUNTS|orders_count/);
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('reads the affiliate (eventually consistently: half a read unit) and the order_no guard of an order stored before derived keys, and takes the sequence number with one atomic ADD on the quota item', async () => {
    // Act
    await postV2(orderBody());

    // Assess
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { TableName: 'unit-table', Key: AFFILIATE_KEY, ConsistentRead: false });
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: AFFILIATE_KEY, ConsistentRead: true });
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { TableName: 'unit-table', Key: GUARD_KEY, ProjectionExpression: 'order_uuid' });
    expect(updatesOf(ORDER_SEQUENCE_KEY)).toHaveLength(1);
    expect(updatesOf(ORDER_SEQUENCE_KEY)[0]?.args[0].input).toEqual({
      TableName: 'unit-table',
      Key: ORDER_SEQUENCE_KEY,
      UpdateExpression: 'SET #taken = :taken ADD #seq :count',
      // Refused only before the merchant's sequence is started (never on a race): see the next test.
      ConditionExpression: 'attribute_exists(#seq)',
      ExpressionAttributeNames: { '#taken': 'seq_taken', '#seq': 'orders_seq' },
      ExpressionAttributeValues: { ':taken': true, ':count': 1 },
      ReturnValues: 'ALL_NEW',
    });
    // The sequence is never read first.
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: ORDER_SEQUENCE_KEY });
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: ORDER_COUNTER_KEY });
  });

  /** The quota item without a sequence until it is started; `counter`: the older COUNTER#orders, if any. */
  const unstartedSequence = (counter?: number) => {
    const state: { started?: number; derivedFrom?: number } = {};
    ddbMock
      .on(GetCommand, { Key: ORDER_COUNTER_KEY, ConsistentRead: true })
      .resolves(counter === undefined ? {} : { Item: { ...ORDER_COUNTER_KEY, type: 'counter', seq: counter } });
    ddbMock.on(UpdateCommand, { Key: ORDER_SEQUENCE_KEY }).callsFake(async (input: UpdateCommandInput) => {
      const values = input.ExpressionAttributeValues ?? {};
      if (input.ConditionExpression === 'attribute_not_exists(#seq)') {
        state.started = values[':last'];
        state.derivedFrom = values[':first'];
        return {};
      }
      if (state.started === undefined) throw conditionFailed();
      state.started += values[':count'];
      return { Attributes: { orders_seq: state.started, orders_derived_from: state.derivedFrom } };
    });
    return state;
  };

  it("numbers a merchant's first order after its older COUNTER#orders by a gap, having marked that counter's last block for recount first", async () => {
    // Prepare: orders numbered up to 300 by the older counter; the quota item has no sequence yet
    const sequence = unstartedSequence(300);

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    // The first number of the block 300 + the gap falls in, so that block fills.
    const first = Math.floor((300 + ORDER_SEQUENCE_GAP) / BLOCK_SIZE) * BLOCK_SIZE;
    expect(sequence.started).toBe(first);
    // Its blocks count from the sequence, from its first number on.
    expect(sequence.derivedFrom).toBe(first);
    expect(orderPut()?.Item?.gsi1sk).toBe(padSeq(first));
    expect(updatesOf(orderBlockKey(1))[0]?.args[0].input.UpdateExpression).toMatch(/^ADD n :zero SET #type = :type, marked_at = :now/);
    const start = tableCalls().findIndex((call) => (call.input as UpdateCommandInput).ConditionExpression === 'attribute_not_exists(#seq)');
    expect(positionOf('UpdateCommand', orderBlockKey(1))).toBeLessThan(start);
  });

  it("starts a new merchant's sequence past the gap too, at a block's first number: a create of the code before may be numbering its first order from 1", async () => {
    // Prepare
    const sequence = unstartedSequence();

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(sequence.started).toBe(ORDER_SEQUENCE_GAP);
    expect(ORDER_SEQUENCE_GAP % BLOCK_SIZE).toBe(0);
  });

  it('reads the affiliate again strongly when the eventually consistent read does not see it active, so one accepted a moment ago is found', async () => {
    // Prepare: a replica has not yet seen the affiliate's acceptance
    ddbMock.on(GetCommand, { Key: AFFILIATE_KEY, ConsistentRead: false }).resolves({});

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: AFFILIATE_KEY, ConsistentRead: true });
  });

  it('takes the sequence number while it reads (one round trip for the three), then puts the order', async () => {
    // Prepare: the affiliate read answers only after a turn of the event loop, and notes whether
    // the counter's ADD had been sent by then: a create that waited for its reads would not have.
    let addsSentDuringRead = -1;
    ddbMock.on(GetCommand, { Key: AFFILIATE_KEY }).callsFake(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      addsSentDuringRead = updatesOf(ORDER_SEQUENCE_KEY).length;
      return { Item: storedAffiliate() };
    });

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(addsSentDuringRead).toBe(1);
    const affiliateRead = positionOf('GetCommand', AFFILIATE_KEY);
    const guardRead = positionOf('GetCommand', GUARD_KEY);
    const sequence = positionOf('UpdateCommand', ORDER_SEQUENCE_KEY);
    const put = positionOf('PutCommand');
    expect(Math.min(affiliateRead, guardRead, sequence, put)).toBeGreaterThanOrEqual(0);
    expect(Math.max(affiliateRead, guardRead, sequence)).toBeLessThan(put);
  });

  it('writes no list count after the commit (its block derives the count from the sequence) and does not upsert the customer: the change feed does', async () => {
    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(updatesOf(CUSTOMER_KEY)).toHaveLength(0);
    // The only UpdateItem is the sequence number's.
    expect(ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key)).toEqual([ORDER_SEQUENCE_KEY]);
  });

  it('on a block numbered before derived counts, adds the order to its list block count after the commit', async () => {
    // Prepare: the sequence derives its counts from a later block on
    stubOrderSequence(42, { derivedFrom: COUNTED_BY_ADD_BELOW });

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(updatesOf(orderBlockKey(0))).toHaveLength(1);
    expect(updatesOf(orderBlockKey(0))[0]?.args[0].input).toEqual({
      TableName: 'unit-table',
      Key: orderBlockKey(0),
      UpdateExpression: 'ADD n :delta, v :one SET #type = :type, changed_at = :now',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':delta': 1, ':one': 1, ':type': 'list_count', ':now': expect.any(String) },
    });
    const commit = positionOf('PutCommand');
    expect(positionOf('UpdateCommand', orderBlockKey(0))).toBeGreaterThan(commit);
    expect(ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key)).toEqual([ORDER_SEQUENCE_KEY, orderBlockKey(0)]);
  });

  it('on a sequence started before derived counts, counts the order by ADD and derives the counts from the next block on', async () => {
    // Prepare: the quota item has a sequence and no `orders_derived_from`
    stubOrderSequence(300, {});

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(updatesOf(orderBlockKey(1))).toHaveLength(1);
    const derive = updatesOf(ORDER_SEQUENCE_KEY).find((call) => call.args[0].input.UpdateExpression === 'SET #from = :first');
    expect(derive?.args[0].input).toMatchObject({
      ConditionExpression: 'attribute_exists(#seq) AND attribute_not_exists(#from)',
      ExpressionAttributeValues: { ':first': 512 },
    });
  });

  it('commits an order from which the change feed announces order.created (version 1) and upserts the customer (lowercased e-mail, idempotently)', async () => {
    // Prepare: the create commits; the table's stream then carries the order it put.
    const response = await postV2(orderBody());
    const committed = orderPut()?.Item as Record<string, unknown>;
    sqsMock.on(SendMessageBatchCommand).callsFake(acceptAll);

    // Act
    const fed = await changeFeed(insertEvent(committed), workerContext('change-feed'));

    // Assess
    const uuid = response.body.data.order.uuid as string;
    expect(fed).toEqual({ batchItemFailures: [] });
    const sent = sqsMock.commandCalls(SendMessageBatchCommand).flatMap((call) => call.args[0].input.Entries ?? []);
    expect(sqsMock).toHaveReceivedCommandWith(SendMessageBatchCommand, { QueueUrl: QUEUE_URL });
    expect(sent.map((entry) => JSON.parse(entry.MessageBody ?? ''))).toEqual([
      expect.objectContaining({ type: 'order.created', merchant_id: MERCHANT.id, order_uuid: uuid, version: 1 }),
    ]);
    expect(updatesOf(CUSTOMER_KEY)).toHaveLength(1);
    const customer = updatesOf(CUSTOMER_KEY)[0]?.args[0].input;
    expect(customer).toMatchObject({
      TableName: 'unit-table',
      ExpressionAttributeValues: expect.objectContaining({ ':type': 'customer', ':email': 'dan@example.com', ':name': 'Dan Customer' }),
    });
    // Idempotent: a first name and e-mail are never overwritten by a later order.
    expect(customer?.UpdateExpression).toContain('email = if_not_exists(email, :email)');
    expect(customer?.UpdateExpression).toContain('#name = if_not_exists(#name, :name)');
    expect(customer).not.toHaveProperty('ConditionExpression');
  });

  it('counts an order numbered before derived counts in the block of 256 sequence numbers its own number falls in', async () => {
    // Prepare
    stubOrderCreate({ seq: 513, derivedFrom: COUNTED_BY_ADD_BELOW });

    // Act
    await postV2(orderBody());

    // Assess
    expect(orderPut()?.Item).toMatchObject({ seq: 513, gsi1sk: '000000000513' });
    expect(updatesOf(orderBlockKey(2))).toHaveLength(1);
    expect(ddbMock.commandCalls(UpdateCommand).filter((call) => call.args[0].input.Key?.pk === COUNTS_PK)).toHaveLength(1);
  });

  it('still answers 201 when its block count can be neither kept nor marked for recount after the commit, and logs it', async () => {
    // Prepare: the ADD and the recount mark of the block both fail.
    stubOrderSequence(42, { derivedFrom: COUNTED_BY_ADD_BELOW });
    ddbMock.on(UpdateCommand, { Key: orderBlockKey(0) }).rejects(new Error('ProvisionedThroughputExceededException'));
    const logged = vi.spyOn(logger, 'error');

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(updatesOf(orderBlockKey(0))).toHaveLength(2);
    expect(logged).toHaveBeenCalledTimes(1);
    expect(logged).toHaveBeenCalledWith(
      'Order committed; its list count could not be kept',
      expect.objectContaining({ order_uuid: response.body.data.order.uuid }),
    );
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it("logs a count it could not keep while the request's log keys (its trace id) are still set, though the count ends beside the answer", async () => {
    // Prepare: the ADD and the recount mark of the block both fail, a moment late
    stubOrderSequence(42, { derivedFrom: COUNTED_BY_ADD_BELOW });
    ddbMock.on(UpdateCommand, { Key: orderBlockKey(0) }).callsFake(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw new Error('ProvisionedThroughputExceededException');
    });
    const logged = vi.spyOn(logger, 'error');
    const keysReset = vi.spyOn(logger, 'resetKeys');

    // Act
    const response = await postV2(orderBody());

    // Assess: logged before the logger dropped the request's keys at its end
    expect(response.statusCode).toBe(201);
    expect(logged).toHaveBeenCalledWith('Order committed; its list count could not be kept', expect.anything());
    expect(logged.mock.invocationCallOrder[0]).toBeLessThan(keysReset.mock.invocationCallOrder.at(-1) ?? 0);
  });

  it('stores the affiliate slug in lowercase and the currency code in uppercase', async () => {
    // Act
    const response = await postV2(orderBody({ affiliate_slug: 'ALICE', currency_code: 'eur' }));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: AFFILIATE_KEY });
    expect(orderPut()?.Item).toMatchObject({ affiliate_slug: 'alice', currency_code: 'EUR' });
  });

  it('creates an order whose order_no is 255 characters outside the BMP, without reading an old order_no guard under a key DynamoDB could not hold', async () => {
    // Prepare
    const orderNo = '\u{1F3D5}'.repeat(255);

    // Act
    const response = await postV2(orderBody({ order_no: orderNo }));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.body.data.order.order_no).toBe(orderNo);
    const keysRead = ddbMock.commandCalls(GetCommand).map((call) => call.args[0].input.Key?.sk as string);
    expect(keysRead.some((sk) => sk.startsWith('ORDER_NO#'))).toBe(false);
  });

  it('answers 422 on an affiliate_slug of 255 characters outside the BMP: no affiliate can have it, and its key is not read', async () => {
    // Act
    const response = await postV2(orderBody({ affiliate_slug: '\u{1F3D5}'.repeat(255) }));

    // Assess
    expectV2Error(response, 422, { affiliate_slug: ['The selected affiliate slug is invalid.'] });
    const keysRead = ddbMock.commandCalls(GetCommand).map((call) => call.args[0].input.Key?.sk as string);
    expect(keysRead.some((sk) => sk.startsWith('AFFILIATE#'))).toBe(false);
    expect(orderPuts()).toHaveLength(0);
  });

  it('gives the first order of a merchant sequence number 1 (ADD creates the counter)', async () => {
    // Prepare
    stubOrderCreate({ seq: 1, derivedFrom: COUNTED_BY_ADD_BELOW });

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(orderPut()?.Item).toMatchObject({ seq: 1, gsi1sk: '000000000001' });
    expect(updatesOf(orderBlockKey(0))).toHaveLength(1);
  });

  it('writes no customer item when the order has no customer', async () => {
    // Prepare
    const { customer: _customer, ...withoutCustomer } = orderBody();

    // Act
    const response = await postV2(withoutCustomer);

    // Assess
    expect(response.statusCode).toBe(201);
    expect(orderPuts()).toHaveLength(1);
    expect(orderPut()?.Item).toMatchObject({ customer: null });
    expect(ddbMock.commandCalls(UpdateCommand).filter((call) => String(call.args[0].input.Key?.sk).startsWith('CUSTOMER#'))).toHaveLength(
      0,
    );
  });

  it('sends nothing to SQS and never writes the order again after its commit (no published mark): the change feed announces order.created', async () => {
    // Act
    const response = await postV2(orderBody());

    // Assess
    const uuid = response.body.data.order.uuid as string;
    expect(response.statusCode).toBe(201);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
    expect(updatesOf({ pk: MERCHANT_PK, sk: `ORDER#${uuid}` })).toHaveLength(0);
    expect(
      ddbMock.commandCalls(UpdateCommand).some((call) => /published_version|gsi2/.test(String(call.args[0].input.UpdateExpression))),
    ).toBe(false);
  });

  it.each([
    ['down', new Error('connect ETIMEDOUT')],
    // What the SDK throws once its request timeout (shared/sdk-timeouts.ts) expires.
    [
      'hung',
      Object.assign(new Error('a request has exceeded the configured 2000 ms requestTimeout'), { name: 'TimeoutError', code: 'ETIMEDOUT' }),
    ],
  ])('answers 201 on both routes when SQS is %s: the request path never calls it', async (_label, error) => {
    // Prepare
    sqsMock.onAnyCommand().rejects(error);

    // Act
    const v2 = await postV2(orderBody());
    const legacy = await postLegacy(orderBody({ order_no: 'A-1002' }));

    // Assess
    expect(v2.statusCode).toBe(201);
    expect(v2.body.success).toBe(true);
    expect(legacy.statusCode).toBe(201);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  /** Every UpdateItem's key, in order. */
  const updatedKeys = () => ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key);

  it.each([
    ['unknown', null],
    ['inactive', storedAffiliate({ status: 'inactive', accepted_at: null })],
  ])(
    "answers 422 on affiliate_slug for an %s affiliate; no order is put, and the sequence number taken beside the reads is noted as its block's hole",
    async (_label, affiliate) => {
      // Prepare
      stubOrderCreate({ affiliate });

      // Act
      const response = await postV2(orderBody());

      // Assess
      expectV2Error(response, 422, { affiliate_slug: ['The selected affiliate slug is invalid.'] });
      // The sequence number is never counted: the lists show no gap.
      expect(updatedKeys()).toEqual([ORDER_SEQUENCE_KEY, orderBlockKey(0)]);
      expect(updatesOf(orderBlockKey(0))[0]?.args[0].input.UpdateExpression).toBe(
        'ADD holes :holes, v :one SET #type = :type, changed_at = :now',
      );
      expect(ddbMock).not.toHaveReceivedCommand(PutCommand);
      expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
      expect(sqsMock).not.toHaveReceivedAnyCommand();
    },
  );

  it('answers 422 on order_no when an order stored before derived keys holds it (its guard exists); no order is put, the number is a hole', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: GUARD_KEY }).resolves({ Item: { order_uuid: OTHER_ORDER_UUID } });

    // Act
    const response = await postV2(orderBody());

    // Assess
    expectV2Error(response, 422, { order_no: ['The order no has already been taken.'] });
    expect(updatedKeys()).toEqual([ORDER_SEQUENCE_KEY, orderBlockKey(0)]);
    expect(ddbMock).not.toHaveReceivedCommand(PutCommand);
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  /** Another request's order that holds order_no A-1001 (sequence number 300, created 2026-03-01T10:00). */
  const otherRequestsOrder = (uuid: string) =>
    storedOrder({
      uuid,
      seq: 300,
      order_no: 'A-1001',
      created_at: '2026-03-01T10:00:00.000Z',
      version: 1,
      last_write_id: '7f6e5d4c-3b2a-4190-8fed-cba987654321',
    });

  /**
   * The order_no is held by another order, read at `now`: one stored before derived keys (its
   * guard names it) or one under the derived key (the put is refused and hands it back).
   */
  const orderNoHeldSince = (now: string, holder: 'guard' | 'derived key') => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(now));
    if (holder === 'guard') {
      ddbMock.on(GetCommand, { Key: GUARD_KEY }).resolves({ Item: { order_uuid: OTHER_ORDER_UUID } });
      ddbMock
        .on(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${OTHER_ORDER_UUID}` } })
        .resolves({ Item: otherRequestsOrder(OTHER_ORDER_UUID) });
    } else ddbMock.on(PutCommand, ORDER_PUT).rejects(heldBy(otherRequestsOrder(A_1001_UUID)));
  };

  describe.each(['guard', 'derived key'] as const)('an order_no held by an order found by its %s', (holder) => {
    it("answers 422 on order_no held by an order created within the hour, and marks that order's block for recount (its create may have stopped before counting it)", async () => {
      // Prepare: the holder was created a minute ago, with sequence number 300 (block 1).
      orderNoHeldSince('2026-03-01T10:01:00.000Z', holder);

      // Act
      const response = await postV2(orderBody());

      // Assess
      expectV2Error(response, 422, { order_no: ['The order no has already been taken.'] });
      expect(recountMarks()).toEqual([orderBlockKey(1)]);
      expect(updatedKeys()).toEqual([ORDER_SEQUENCE_KEY, orderBlockKey(1), orderBlockKey(0)]);
      expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
      expect(sqsMock).not.toHaveReceivedAnyCommand();
    });

    it('answers 422 on order_no held by an older order without marking anything', async () => {
      // Prepare: the holder was created two hours ago.
      orderNoHeldSince('2026-03-01T12:00:00.000Z', holder);

      // Act
      const response = await postV2(orderBody());

      // Assess
      expectV2Error(response, 422, { order_no: ['The order no has already been taken.'] });
      expect(recountMarks()).toEqual([]);
      expect(updatedKeys()).toEqual([ORDER_SEQUENCE_KEY, orderBlockKey(0)]);
    });
  });

  it('names both fields when the affiliate is invalid and the order_no is taken', async () => {
    // Prepare
    stubOrderCreate({ affiliate: null });
    ddbMock.on(GetCommand, { Key: GUARD_KEY }).resolves({ Item: { order_uuid: OTHER_ORDER_UUID } });

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual({
      affiliate_slug: ['The selected affiliate slug is invalid.'],
      order_no: ['The order no has already been taken.'],
    });
  });

  it('answers 422 on order_no when its put is refused for an order of another request: a lost race; the sequence number is a hole', async () => {
    // Prepare: no guard, the key was free when read; another create put its order first.
    ddbMock.on(PutCommand, ORDER_PUT).rejects(heldBy(otherRequestsOrder(A_1001_UUID)));

    // Act
    const response = await postV2(orderBody());

    // Assess
    expectV2Error(response, 422, { order_no: ['The order no has already been taken.'] });
    expect(orderPuts()).toHaveLength(1);
    // The holder came back with the refusal: it is not read again.
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${A_1001_UUID}` } });
    // The sequence number was taken, but it is never counted: the lists show no gap.
    expect(updatedKeys()).toEqual([ORDER_SEQUENCE_KEY, orderBlockKey(0)]);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it("does not take a refusal of its put that names no order for an order_no problem: 500 (a defect, not the client's fault), its number a hole", async () => {
    // Prepare: the put asks for the holder (ALL_OLD); a refusal without it cannot be told apart.
    ddbMock.on(PutCommand, ORDER_PUT).rejects(conditionFailed());

    // Act
    const response = await postV2(orderBody());

    // Assess: read back, the order is not there
    expect(response.statusCode).toBe(500);
    expect(orderPuts()).toHaveLength(1);
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${A_1001_UUID}` }, ConsistentRead: true });
    expect(updatedKeys()).toEqual([ORDER_SEQUENCE_KEY, orderBlockKey(0)]);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('does not retry a failure that is not a conflict: 500, nothing queued, and its number a hole once the order is read back as not stored', async () => {
    // Prepare
    ddbMock.on(PutCommand, ORDER_PUT).rejects(new Error('InternalServerError'));

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(500);
    expect(orderPuts()).toHaveLength(1);
    expect(updatesOf(orderBlockKey(0)).map((call) => call.args[0].input.UpdateExpression)).toEqual([
      'ADD holes :holes, v :one SET #type = :type, changed_at = :now',
    ]);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it("notes no hole when its put's retry finds the order its own lost attempt stored, under the number it took", async () => {
    // Prepare: the first attempt was applied and its answer lost; the retry is refused with that order
    ddbMock.on(PutCommand, ORDER_PUT).callsFake(async (input: { Item: Record<string, unknown> }) => {
      throw heldBy(input.Item);
    });

    // Act
    const response = await postV2(orderBody());

    // Assess: its block is marked for recount (whether it was counted is unknown), no hole noted
    expect(response.statusCode).toBe(201);
    const writes = updatesOf(orderBlockKey(0)).map((call) => String(call.args[0].input.UpdateExpression));
    expect(writes.filter((expression) => expression.startsWith('ADD holes'))).toEqual([]);
  });

  it('notes no hole for a put that failed yet was applied (read back, the order is there): its number names it', async () => {
    // Prepare: the put's answer is lost after it was applied; the read back finds this request's order
    ddbMock.on(PutCommand, ORDER_PUT).callsFake(async (input: { Item: Record<string, unknown> }) => {
      ddbMock.on(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${A_1001_UUID}` } }).resolves({ Item: input.Item });
      throw new Error('InternalServerError');
    });

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(500);
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${A_1001_UUID}` }, ConsistentRead: true });
    expect(updatesOf(orderBlockKey(0))).toHaveLength(0);
  });

  it('answers 422 on currency_code when it is not the merchant currency, without reading or writing', async () => {
    // Act
    const response = await postV2(orderBody({ currency_code: 'USD' }));

    // Assess
    expectV2Error(response, 422, { currency_code: ['The currency code must match the merchant account currency (EUR).'] });
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: AFFILIATE_KEY });
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
    expect(orderPuts()).toHaveLength(0);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 422 on currency_code when the code is not a known currency', async () => {
    // Act
    const response = await postV2(orderBody({ currency_code: 'ZZZ' }));

    // Assess
    expectV2Error(response, 422, { currency_code: ['The selected currency code is invalid.'] });
    expect(orderPuts()).toHaveLength(0);
  });

  it('answers 422 keyed by field, nested keys included, when the body is invalid; nothing is written', async () => {
    // Prepare
    const body = {
      affiliate_slug: '',
      total_shipping_value: -1,
      currency_code: 'EURO',
      customer: { name: 'No Mail' },
      order_rows: [{ price_value: 100, quantity: 0 }],
    };

    // Act
    const response = await postV2(body);

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual({
      affiliate_slug: ['The affiliate slug field is required.'],
      order_no: ['The order no field is required.'],
      total_shipping_value: ['The total shipping value field must be at least 0.'],
      currency_code: ['The currency code field must be 3 characters.'],
      'customer.email': ['The customer.email field is required.'],
      'order_rows.0.product_name': ['The order rows.0.product name field is required.'],
      'order_rows.0.quantity': ['The order rows.0.quantity field must be greater than 0.'],
    });
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
    expect(orderPuts()).toHaveLength(0);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 422 when order_rows is empty', async () => {
    // Act
    const response = await postV2(orderBody({ order_rows: [] }));

    // Assess
    expectV2Error(response, 422, { order_rows: ['The order rows field must have at least 1 items.'] });
  });

  it('reads only its own merchant: the merchant item is read by authentication alone', async () => {
    // Act
    await postV2(orderBody());

    // Assess
    expect(ddbMock.commandCalls(GetCommand, { Key: MERCHANT_KEY })).toHaveLength(1);
    const keys = ddbMock
      .calls()
      .map((call) => (call.args[0].input as { Key?: { pk: string } }).Key?.pk)
      .filter((pk) => pk !== undefined);
    expect(keys.every((pk) => pk === MERCHANT_PK || pk === COUNTS_PK || pk === ORDER_SEQUENCE_KEY.pk)).toBe(true);
  });
});

describe('POST /api/orders/create (legacy)', () => {
  it('answers 201 in the legacy envelope with uuid and order_no', async () => {
    // Act
    const response = await postLegacy(orderBody({ order_no: 'L-1' }));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.body).toEqual({
      success: true,
      message: 'Order created successfully.',
      data: { uuid: derivedOrderUuid('L-1'), order_no: 'L-1' },
    });
  });

  it('writes the same one put as V2 and no count, upserts no customer and sends nothing to SQS', async () => {
    // Act
    const response = await postLegacy(orderBody({ affiliate_slug: 'Alice' }));

    // Assess
    const uuid = response.body.data.uuid as string;
    expect(uuid).toBe(A_1001_UUID);
    expect(ddbMock.commandCalls(PutCommand)).toHaveLength(1);
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(orderPut()).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' });
    expect(orderPut()?.Item).toMatchObject({ sk: `ORDER#${uuid}`, gsi1pk: ORDERS_LIST_PK, affiliate_slug: 'alice', version: 1 });
    expect(orderPut()?.Item).not.toHaveProperty('gsi2pk');
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: AFFILIATE_KEY, ConsistentRead: false });
    expect(ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input.Key)).toEqual([ORDER_SEQUENCE_KEY]);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 422 with data.errors when order_no is taken', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: GUARD_KEY }).resolves({ Item: { order_uuid: OTHER_ORDER_UUID } });

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body).toEqual({
      success: false,
      message: 'The given data was invalid.',
      data: { errors: { order_no: ['The order no has already been taken.'] } },
    });
    expect(orderPuts()).toHaveLength(0);
  });

  it('answers 422 with data.errors when the order_no race is lost at the commit', async () => {
    // Prepare
    ddbMock
      .on(PutCommand, ORDER_PUT)
      .rejects(heldBy(storedOrder({ uuid: A_1001_UUID, order_no: 'A-1001', last_write_id: '7f6e5d4c-3b2a-4190-8fed-cba987654321' })));

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.data.errors).toEqual({ order_no: ['The order no has already been taken.'] });
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 422 with data.errors when the affiliate is unknown or inactive', async () => {
    // Prepare
    stubOrderCreate({ affiliate: storedAffiliate({ status: 'inactive' }) });

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.data.errors).toEqual({ affiliate_slug: ['The selected affiliate slug is invalid.'] });
    expect(orderPuts()).toHaveLength(0);
  });

  it('answers 422 with data.errors naming every missing required field', async () => {
    // Act
    const response = await postLegacy({});

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body).toEqual({
      success: false,
      message: 'The given data was invalid.',
      data: {
        errors: {
          affiliate_slug: ['The affiliate slug field is required.'],
          order_no: ['The order no field is required.'],
          total_shipping_value: ['The total shipping value field is required.'],
          currency_code: ['The currency code field is required.'],
          order_rows: ['The order rows field is required.'],
        },
      },
    });
    expect(orderPuts()).toHaveLength(0);
  });

  it('still answers 201 when the queue is down: the request path never calls it', async () => {
    // Prepare
    sqsMock.onAnyCommand().rejects(new Error('connect ECONNREFUSED'));

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.body.success).toBe(true);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers a failure that is not an ApiError with a generic legacy 500', async () => {
    // Prepare
    ddbMock.on(PutCommand, ORDER_PUT).rejects(new Error('socket hang up'));

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(500);
    expect(response.body).toEqual({ success: false, message: 'Server Error', data: [] });
  });
});
