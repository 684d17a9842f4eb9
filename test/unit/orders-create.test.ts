import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as createLegacy } from '../../functions/orders/create-legacy';
import { handler as createV2 } from '../../functions/orders/create';
import { apiEvent, invoke } from './support/api';
import { ddbMock, resetAwsMocks, sqsMock, transactionCanceled } from './support/aws';
import { MERCHANT, MERCHANT_KEY, MERCHANT_PK, orderBody, stubAuth, TOKENS, TRACE_ID, UUID } from './support/fixtures';

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const postV2 = (body: unknown) => invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body }));
const postLegacy = (body: unknown) => invoke(createLegacy, apiEvent('orders-create-legacy', { token: TOKENS.live, body }));

/** The TransactItems of the n-th TransactWriteItems call. */
const transactItems = (call = 0) => ddbMock.commandCalls(TransactWriteCommand)[call]?.args[0].input.TransactItems ?? [];

const merchantItem = (ordersCount: number) => ({ Item: { ...MERCHANT_KEY, name: MERCHANT.name, currency: MERCHANT.currency, orders_count: ordersCount } });

beforeEach(() => {
  resetAwsMocks();
  stubAuth({ ordersCount: 41 });
  ddbMock.on(TransactWriteCommand).resolves({});
  ddbMock.on(UpdateCommand).resolves({});
  sqsMock.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
});

afterEach(() => {
  vi.useRealTimers();
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
      data: { order: { uuid: expect.stringMatching(UUID), order_no: 'A-1001' } },
      errors: null,
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
  });

  it('writes the order in ONE transaction: affiliate check, order_no guard, counter, order with outbox entry, customer', async () => {
    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    const uuid = response.body.data.order.uuid as string;
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    const items = transactItems();
    expect(items).toHaveLength(5);
    const [affiliate, guard, counter, order, customer] = items;

    expect(affiliate?.ConditionCheck).toEqual({
      TableName: 'unit-table',
      Key: { pk: MERCHANT_PK, sk: 'AFFILIATE#alice' },
      ConditionExpression: 'attribute_exists(pk) AND #status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':active': 'active' },
    });
    expect(guard?.Put).toEqual({
      TableName: 'unit-table',
      Item: { pk: MERCHANT_PK, sk: 'ORDER_NO#A-1001', type: 'order_no', order_uuid: uuid },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect(counter?.Update).toMatchObject({
      TableName: 'unit-table',
      Key: MERCHANT_KEY,
      UpdateExpression: 'SET orders_count = :next',
      ConditionExpression: 'orders_count = :expected',
      ExpressionAttributeValues: { ':next': 42, ':expected': 41 },
    });
    expect(order?.Put).toEqual({
      TableName: 'unit-table',
      ConditionExpression: 'attribute_not_exists(pk)',
      Item: {
        pk: MERCHANT_PK,
        sk: `ORDER#${uuid}`,
        gsi1pk: `${MERCHANT_PK}#ORDERS`,
        gsi1sk: '000000000042',
        gsi2pk: 'OUTBOX',
        gsi2sk: expect.stringMatching(ISO),
        type: 'order',
        uuid,
        seq: 42,
        order_no: 'A-1001',
        affiliate_slug: 'alice',
        total_shipping_value: 495,
        currency_code: 'EUR',
        order_rows: [
          { uuid: expect.stringMatching(UUID), product_sku: 'TENT-2P', product_name: 'Tent', segment_slug: 'outdoor', price_value: 19900, tax_value: 3781, quantity: 1 },
          { uuid: expect.stringMatching(UUID), product_sku: null, product_name: 'Tent pegs', segment_slug: null, price_value: 500, tax_value: null, quantity: 4 },
        ],
        customer: { name: 'Dan Customer', email: 'Dan@Example.com' },
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      },
    });
    expect(customer?.Update).toMatchObject({
      TableName: 'unit-table',
      Key: { pk: MERCHANT_PK, sk: 'CUSTOMER#dan@example.com' },
      ExpressionAttributeValues: expect.objectContaining({ ':type': 'customer', ':email': 'Dan@Example.com', ':name': 'Dan Customer' }),
    });
  });

  it('reads the order counter consistently before taking the next sequence number', async () => {
    // Act
    await postV2(orderBody());

    // Assess
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, {
      TableName: 'unit-table',
      Key: MERCHANT_KEY,
      ProjectionExpression: 'orders_count',
      ConsistentRead: true,
    });
  });

  it('stores the affiliate slug in lowercase and the currency code in uppercase', async () => {
    // Act
    const response = await postV2(orderBody({ affiliate_slug: 'ALICE', currency_code: 'eur' }));

    // Assess
    expect(response.statusCode).toBe(201);
    const [affiliate, , , order] = transactItems();
    expect(affiliate?.ConditionCheck?.Key).toEqual({ pk: MERCHANT_PK, sk: 'AFFILIATE#alice' });
    expect(order?.Put?.Item).toMatchObject({ affiliate_slug: 'alice', currency_code: 'EUR' });
  });

  it('gives the first order of a merchant sequence number 1, accepting a counter that does not exist yet', async () => {
    // Prepare
    ddbMock.reset();
    stubAuth();
    ddbMock.on(TransactWriteCommand).resolves({});
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    const [, , counter, order] = transactItems();
    expect(counter?.Update).toMatchObject({
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(orders_count) OR orders_count = :expected)',
      ExpressionAttributeValues: { ':next': 1, ':expected': 0 },
    });
    expect(order?.Put?.Item).toMatchObject({ seq: 1, gsi1sk: '000000000001' });
  });

  it('writes no customer item when the order has no customer', async () => {
    // Prepare
    const { customer: _customer, ...withoutCustomer } = orderBody();

    // Act
    const response = await postV2(withoutCustomer);

    // Assess
    expect(response.statusCode).toBe(201);
    const items = transactItems();
    expect(items).toHaveLength(4);
    expect(items[3]?.Put?.Item).toMatchObject({ customer: null });
  });

  it('puts an order.accepted message naming the order on the orders queue, then clears the outbox entry', async () => {
    // Act
    const response = await postV2(orderBody());

    // Assess
    const uuid = response.body.data.order.uuid as string;
    expect(sqsMock).toHaveReceivedCommandExactlyOnceWith(SendMessageCommand, { QueueUrl: QUEUE_URL });
    const message = JSON.parse(sqsMock.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageBody ?? '');
    expect(message).toEqual({ type: 'order.accepted', merchant_id: MERCHANT.id, order_uuid: uuid });
    expect(ddbMock).toHaveReceivedCommandExactlyOnceWith(UpdateCommand, {
      TableName: 'unit-table',
      Key: { pk: MERCHANT_PK, sk: `ORDER#${uuid}` },
      UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
    });
  });

  it('still answers 201 when the queue is down, and leaves the outbox entry for the relay', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).rejects(new Error('connect ETIMEDOUT'));

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.body.success).toBe(true);
    expect(transactItems()[3]?.Put?.Item).toMatchObject({ gsi2pk: 'OUTBOX', gsi2sk: expect.stringMatching(ISO) });
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('still answers 201 when the queue times out (a hung SQS), and leaves the outbox entry for the relay', async () => {
    // Prepare: what the SDK throws once its request timeout (shared/sdk-timeouts.ts) expires
    sqsMock.on(SendMessageCommand).rejects(Object.assign(new Error('a request has exceeded the configured 2000 ms requestTimeout'), { name: 'TimeoutError', code: 'ETIMEDOUT' }));

    // Act
    const v2 = await postV2(orderBody());
    const legacy = await postLegacy(orderBody({ order_no: 'A-1002' }));

    // Assess
    expect(v2.statusCode).toBe(201);
    expect(legacy.statusCode).toBe(201);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('still answers 201 when the queue has the message but the outbox entry cannot be cleared', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(new Error('ProvisionedThroughputExceededException'));

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(sqsMock).toHaveReceivedCommandTimes(SendMessageCommand, 1);
  });

  it('answers 422 on affiliate_slug when the affiliate check (item 0) fails, without retrying or queueing', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(transactionCanceled('ConditionalCheckFailed', 'None', 'None', 'None', 'None'));

    // Act
    const response = await postV2(orderBody({ affiliate_slug: 'ivan' }));

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body).toEqual({
      success: false,
      data: null,
      errors: { affiliate_slug: ['The selected affiliate slug is invalid.'] },
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 422 on order_no when the order_no guard (item 1) fails', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(transactionCanceled('None', 'ConditionalCheckFailed', 'None', 'None', 'None'));

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual({ order_no: ['The order no has already been taken.'] });
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('names both fields when the affiliate check and the order_no guard both fail', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(transactionCanceled('ConditionalCheckFailed', 'ConditionalCheckFailed', 'None', 'None', 'None'));

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual({
      affiliate_slug: ['The selected affiliate slug is invalid.'],
      order_no: ['The order no has already been taken.'],
    });
  });

  it('retries with the next sequence number when only the counter condition (item 2) lost a race', async () => {
    // Prepare: another order took seq 8 between our read and our write.
    ddbMock
      .on(GetCommand, { Key: MERCHANT_KEY })
      .resolvesOnce(merchantItem(7)) // authentication
      .resolvesOnce(merchantItem(7)) // first counter read
      .resolves(merchantItem(8));
    ddbMock
      .on(TransactWriteCommand)
      .rejectsOnce(transactionCanceled('None', 'None', { Code: 'ConditionalCheckFailed', Item: { orders_count: { N: '8' } } }, 'None', 'None'))
      .resolves({});

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 2);
    expect(transactItems(0)[2]?.Update?.ExpressionAttributeValues).toEqual({ ':next': 8, ':expected': 7 });
    expect(transactItems(1)[2]?.Update?.ExpressionAttributeValues).toEqual({ ':next': 9, ':expected': 8 });
    expect(transactItems(1)[3]?.Put?.Item).toMatchObject({ seq: 9, gsi1sk: '000000000009', order_no: 'A-1001' });
    const uuid = response.body.data.order.uuid as string;
    expect(transactItems(1)[3]?.Put?.Item?.uuid).toBe(uuid);
    expect(sqsMock).toHaveReceivedCommandTimes(SendMessageCommand, 1);
  });

  it('takes the current count from the cancellation reason, without reading the counter again', async () => {
    // Prepare
    ddbMock
      .on(TransactWriteCommand)
      .rejectsOnce(transactionCanceled('None', 'None', { Code: 'ConditionalCheckFailed', Item: { orders_count: { N: '50' } } }, 'None', 'None'))
      .resolves({});

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(transactItems(0)[2]?.Update).toMatchObject({ ReturnValuesOnConditionCheckFailure: 'ALL_OLD', ExpressionAttributeValues: { ':next': 42, ':expected': 41 } });
    expect(transactItems(1)[2]?.Update?.ExpressionAttributeValues).toEqual({ ':next': 51, ':expected': 50 });
    expect(ddbMock.commandCalls(GetCommand, { ProjectionExpression: 'orders_count' })).toHaveLength(1);
  });

  it('reads the counter again when the cancellation reason does not carry it', async () => {
    // Prepare
    ddbMock
      .on(GetCommand, { Key: MERCHANT_KEY })
      .resolvesOnce(merchantItem(7)) // authentication
      .resolvesOnce(merchantItem(7)) // first counter read
      .resolves(merchantItem(8));
    ddbMock.on(TransactWriteCommand).rejectsOnce(transactionCanceled('None', 'None', 'ConditionalCheckFailed', 'None', 'None')).resolves({});

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(transactItems(1)[2]?.Update?.ExpressionAttributeValues).toEqual({ ':next': 9, ':expected': 8 });
  });

  it('answers 503 with Retry-After when the counter stays contended for the whole retry budget', async () => {
    // Prepare
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    ddbMock.on(TransactWriteCommand).rejects(transactionCanceled('None', 'None', 'ConditionalCheckFailed', 'None', 'None'));

    // Act
    const pending = postV2(orderBody());
    await vi.advanceTimersByTimeAsync(10_000);
    const response = await pending;

    // Assess
    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({ 'retry-after': expect.any(String) });
    expect(response.body).toEqual({
      success: false,
      data: null,
      errors: { message: ['The service is busy. Please retry the request.'] },
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
    expect(ddbMock.commandCalls(TransactWriteCommand).length).toBeGreaterThan(1);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('retries a transaction that was cancelled by a conflicting transaction', async () => {
    // Prepare
    ddbMock
      .on(TransactWriteCommand)
      .rejectsOnce(transactionCanceled('None', 'None', 'TransactionConflict', 'None', 'None'))
      .resolves({});

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 2);
  });

  it('does not retry a failure that is not a cancelled transaction: 500', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(new Error('InternalServerError'));

    // Act
    const response = await postV2(orderBody());

    // Assess
    expect(response.statusCode).toBe(500);
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 422 on currency_code when it is not the merchant currency, without reading the counter or writing', async () => {
    // Act
    const response = await postV2(orderBody({ currency_code: 'USD' }));

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual({ currency_code: ['The currency code must match the merchant account currency (EUR).'] });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { ProjectionExpression: 'orders_count' });
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 422 on currency_code when the code is not a known currency', async () => {
    // Act
    const response = await postV2(orderBody({ currency_code: 'ZZZ' }));

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual({ currency_code: ['The selected currency code is invalid.'] });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
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
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 422 when order_rows is empty', async () => {
    // Act
    const response = await postV2(orderBody({ order_rows: [] }));

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual({ order_rows: ['The order rows field must have at least 1 items.'] });
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
      data: { uuid: expect.stringMatching(UUID), order_no: 'L-1' },
    });
  });

  it('writes the same transaction and queues the same message as V2', async () => {
    // Act
    const response = await postLegacy(orderBody({ affiliate_slug: 'Alice' }));

    // Assess
    const uuid = response.body.data.uuid as string;
    const items = transactItems();
    expect(items.map((item) => Object.keys(item)[0])).toEqual(['ConditionCheck', 'Put', 'Update', 'Put', 'Update']);
    expect(items[0]?.ConditionCheck?.Key).toEqual({ pk: MERCHANT_PK, sk: 'AFFILIATE#alice' });
    expect(items[3]?.Put?.Item).toMatchObject({ sk: `ORDER#${uuid}`, gsi2pk: 'OUTBOX', affiliate_slug: 'alice' });
    const message = JSON.parse(sqsMock.commandCalls(SendMessageCommand)[0]?.args[0].input.MessageBody ?? '');
    expect(message).toEqual({ type: 'order.accepted', merchant_id: MERCHANT.id, order_uuid: uuid });
  });

  it('answers 422 with data.errors when order_no is taken', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(transactionCanceled('None', 'ConditionalCheckFailed', 'None', 'None', 'None'));

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body).toEqual({
      success: false,
      message: 'The given data was invalid.',
      data: { errors: { order_no: ['The order no has already been taken.'] } },
    });
  });

  it('answers 422 with data.errors when the affiliate is unknown or inactive', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(transactionCanceled('ConditionalCheckFailed', 'None', 'None', 'None', 'None'));

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body.data.errors).toEqual({ affiliate_slug: ['The selected affiliate slug is invalid.'] });
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
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('still answers 201 when the queue is down', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).rejects(new Error('connect ECONNREFUSED'));

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.body.success).toBe(true);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('answers a failure that is not an ApiError with a generic legacy 500', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(new Error('socket hang up'));

    // Act
    const response = await postLegacy(orderBody());

    // Assess
    expect(response.statusCode).toBe(500);
    expect(response.body).toEqual({ success: false, message: 'Server Error', data: [] });
  });
});
