import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueWorkers } from '#functions/workers';
import { lambdaContext } from '#local/apigw';
import { createSqsPoller, messagesToDelete, type SqsHandler, toSqsRecord } from '#local/sqs-poller';
import { stageEnvironment } from '#local/stack';
import type { SeededMerchant } from '#shared/admin/seed';
import { merchantPk } from '#shared/db/entities/base';
import { commissionKey } from '#shared/db/entities/commission';
import { orderKey } from '#shared/db/entities/order';
import { api, drainQueue, eventually, merchantFixture, orderBody, seedOne, sqsClient, stack, storeFor } from './helpers';

/**
 * The commission consumer for real: orders created over HTTP put their order.created messages on
 * the live queue; the test moves them (plus a duplicate and two bad messages) to a queue of its own
 * and runs the handler through the local poller, as the event source mapping would; the handler's
 * DLQ (ORDERS_DLQ_URL) is the test's own too. The shared
 * stack's own poller is off (global-setup), so the other tests still see every message.
 */
const [consumer] = queueWorkers();
let handler: SqsHandler;
let merchant: SeededMerchant;
let testQueueUrl: string;
let testDlqUrl: string;
const savedEnv = { ...process.env };
const orders: Record<'alice' | 'nora' | 'sam' | 'cancelled', string> = { alice: '', nora: '', sam: '', cancelled: '' };
let messages: { type: string; merchant_id: string; order_uuid: string; version: number }[] = [];

const commissionsOf = async (merchantId: string) => {
  const store = storeFor('live');
  const { Items = [] } = await store.ddb.send(
    new QueryCommand({
      TableName: store.table,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': merchantPk(merchantId), ':prefix': commissionKey(merchantId, '').sk },
    }),
  );
  return Items;
};

const sqsEvent = (bodies: unknown[]): SQSEvent => ({
  Records: bodies.map((body, index) =>
    toSqsRecord(
      { MessageId: `direct-${index}`, ReceiptHandle: `handle-${index}`, Body: typeof body === 'string' ? body : JSON.stringify(body) },
      'arn:aws:sqs:us-east-1:000000000000:direct',
      'us-east-1',
    ),
  ),
});

beforeAll(async () => {
  const live = stack.stages.live;
  // A queue of the test's own, with the visibility timeout short so failed messages come back
  // quickly, and a DLQ of its own, where the consumer puts the messages that can never succeed.
  const name = `commissions-test-${randomUUID().slice(0, 8)}`;
  const dlq = await sqsClient.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  testDlqUrl = dlq.QueueUrl as string;
  const { Attributes } = await sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }));
  const queue = await sqsClient.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: '1',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: '50' }),
      },
    }),
  );
  testQueueUrl = queue.QueueUrl as string;

  Object.assign(
    process.env,
    stageEnvironment('live', { ...live, queueUrls: { ...live.queueUrls, 'orders-dlq': testDlqUrl } }, stack.endpoints),
    {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    },
  );
  handler = ((await import('#functions/commissions/process')) as { handler: SqsHandler }).handler;

  merchant = await seedOne(
    merchantFixture({
      key: 'commissions',
      tiers: [
        { slug: 'gold', name: 'Gold' },
        { slug: 'silver', name: 'Silver' },
        { slug: 'bronze', name: 'Bronze', default: true },
      ],
      segments: [
        { key: 'default', name: 'Default', default: true, rates: { gold: 10, silver: 5 } },
        { key: 'shoes', name: 'Shoes', slugs: ['shoes', 'boots'], rates: { gold: 12.5, silver: 9 } },
      ],
      affiliates: [
        { slug: 'alice', name: 'Alice', email: 'alice@example.com', tier: 'gold', status: 'active' },
        { slug: 'sam', name: 'Sam', email: 'sam@example.com', tier: 'silver', status: 'active' },
        { slug: 'nora', name: 'Nora', email: 'nora@example.com', status: 'active' },
      ],
    }),
  );
  await drainQueue(live.ordersQueueUrl);
  const client = api('live', merchant.tokens.live);
  const create = async (body: Record<string, unknown>) => {
    const response = await client.post('/api/v2/orders/create', orderBody(body));
    expect(response.status).toBe(201);
    return response.body.data.order.uuid as string;
  };
  orders.alice = await create({
    affiliate_slug: 'alice',
    order_rows: [
      { product_name: 'Boots', segment_slug: 'boots', price_value: 10000, quantity: 2 },
      { product_name: 'Tent', price_value: 19900, quantity: 1 },
    ],
  });
  orders.sam = await create({
    affiliate_slug: 'sam',
    order_rows: [{ product_name: 'Trainers', segment_slug: 'SHOES', price_value: 5999, quantity: 3 }],
  });
  orders.nora = await create({ affiliate_slug: 'nora', order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: 1 }] });
  orders.cancelled = await create({ affiliate_slug: 'alice', order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: 1 }] });
  expect((await client.post(`/api/v2/orders/${orders.cancelled}/cancel`)).status).toBe(200);

  messages = (await eventually(async () => {
    const mine = (await drainQueue(live.ordersQueueUrl)).filter((message) => message.merchant_id === merchant.id);
    messages.push(...mine);
    return messages.length >= 5 ? messages : undefined;
  })) as typeof messages;
});

afterAll(async () => {
  process.env = savedEnv;
  for (const url of [testQueueUrl, testDlqUrl])
    if (url) await sqsClient.send(new DeleteQueueCommand({ QueueUrl: url })).catch(() => undefined);
});

/** Everything on the test's DLQ: body and the consumer's dead-letter attributes. */
const deadLetters = async () => {
  const found: { body: string; attributes: Record<string, string | undefined> }[] = [];
  for (;;) {
    const { Messages = [] } = await sqsClient.send(
      new ReceiveMessageCommand({ QueueUrl: testDlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageAttributeNames: ['All'] }),
    );
    if (Messages.length === 0) return found;
    for (const message of Messages) {
      found.push({
        body: message.Body as string,
        attributes: Object.fromEntries(Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, value.StringValue])),
      });
    }
    await sqsClient.send(
      new DeleteMessageBatchCommand({
        QueueUrl: testDlqUrl,
        Entries: Messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
      }),
    );
  }
};

describe('the commission consumer', () => {
  it('gets exactly one order.created message (version 1) per created order, and one order.cancelled (version 2) for the cancel', () => {
    const acceptedMessages = messages.filter((message) => message.type === 'order.created');
    expect(acceptedMessages.map((message) => message.order_uuid).sort()).toEqual(Object.values(orders).sort());
    expect(acceptedMessages.every((message) => message.version === 1)).toBe(true);
    expect(messages.filter((message) => message.type !== 'order.created')).toEqual([
      expect.objectContaining({ type: 'order.cancelled', merchant_id: merchant.id, order_uuid: orders.cancelled, version: 2 }),
    ]);
  });

  it('keeps one ledger per order from the polled queue, counts a duplicate once, and moves messages that can never succeed to the DLQ at once', async () => {
    const alice = messages.find((message) => message.order_uuid === orders.alice)!;
    const unknownOrder = JSON.stringify({ type: 'order.created', merchant_id: merchant.id, order_uuid: randomUUID() });
    const bodies = [...messages.map((message) => JSON.stringify(message)), JSON.stringify(alice), unknownOrder, 'not json'];
    await sqsClient.send(
      new SendMessageBatchCommand({
        QueueUrl: testQueueUrl,
        Entries: bodies.map((MessageBody, index) => ({ Id: String(index), MessageBody })),
      }),
    );

    const poller = createSqsPoller({
      client: sqsClient,
      queueUrl: testQueueUrl,
      handler,
      functionName: consumer!.id,
      batchSize: 3,
      waitTimeSeconds: 0,
    });
    // Small batches, so the duplicate may land in another batch than its original.
    let deleted = 0;
    for (let round = 0; round < 20 && deleted < bodies.length; round++) deleted += (await poller.pollOnce()).deleted;
    // Every message is acknowledged on its first receive: the good ones recorded, the bad ones dead-lettered.
    expect(deleted).toBe(bodies.length);

    const records = await commissionsOf(merchant.id);
    expect(records).toHaveLength(4);
    const byOrder = Object.fromEntries(records.map((record) => [record.order_uuid, record]));
    expect(byOrder[orders.alice]).toMatchObject({
      type: 'commission',
      affiliate_slug: 'alice',
      tier_slug: 'gold',
      currency_code: 'EUR',
      status: 'pending',
      net_amount: 2500 + 1990,
      applied_version: 1,
      entries: [expect.objectContaining({ type: 'accrual', amount: 2500 + 1990, version: 1 })],
      rows: [
        expect.objectContaining({ rate: 12.5, base_value: 20000, amount: 2500 }),
        expect.objectContaining({ rate: 10, base_value: 19900, amount: 1990 }),
      ],
    });
    expect(byOrder[orders.sam]).toMatchObject({
      tier_slug: 'silver',
      net_amount: Math.round((5999 * 3 * 9) / 100),
      rows: [expect.objectContaining({ rate: 9 })],
    });
    // nora joined without a tier: the default tier (bronze), which no segment rates
    expect(byOrder[orders.nora]).toMatchObject({ tier_slug: 'bronze', net_amount: 0 });
    // cancelled before any of its events was processed: void from the start, nothing accrued or reversed
    expect(byOrder[orders.cancelled]).toMatchObject({ status: 'void', net_amount: 0, entries: [], applied_version: 2 });

    // The two bad messages are on the DLQ with their reasons, and nothing is left to redeliver.
    const dead = await deadLetters();
    expect(dead.map((message) => message.body).sort()).toEqual([unknownOrder, 'not json'].sort());
    expect(dead.find((message) => message.body === 'not json')?.attributes).toMatchObject({
      dead_letter_reason: 'Not an order event message',
      dead_letter_error: 'PermanentMessageError',
      dead_letter_source: 'commissions-process',
      original_receive_count: '1',
    });
    expect(dead.find((message) => message.body === unknownOrder)?.attributes.dead_letter_reason).toMatch(/does not exist/);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past the visibility timeout
    expect((await poller.pollOnce()).received).toBe(0);
  });

  it('dead-letters an order whose amounts cannot be computed exactly (stored before the limits), with the reason', async () => {
    // Prepare: an order with a quantity past the limits, written straight to the table (the API refuses it now)
    const store = storeFor('live');
    const poisonUuid = randomUUID();
    const poison = {
      ...orderKey(merchant.id, poisonUuid),
      type: 'order',
      uuid: poisonUuid,
      seq: 0,
      order_no: `POISON-${poisonUuid}`,
      affiliate_slug: 'alice',
      total_shipping_value: 0,
      currency_code: 'EUR',
      order_rows: [
        {
          uuid: randomUUID(),
          product_sku: null,
          product_name: 'Tent',
          segment_slug: null,
          price_value: 19900,
          tax_value: null,
          quantity: Number.MAX_SAFE_INTEGER,
        },
      ],
      customer: null,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    };
    await store.ddb.send(new PutCommand({ TableName: store.table, Item: poison }));

    // Act
    const response = (await handler(
      sqsEvent([{ type: 'order.created', merchant_id: merchant.id, order_uuid: poisonUuid }]),
      lambdaContext(consumer!.id),
    )) as SQSBatchResponse;

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const dead = await deadLetters();
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0]!.body)).toMatchObject({ order_uuid: poisonUuid });
    expect(dead[0]!.attributes).toMatchObject({
      dead_letter_error: 'AmountNotComputableError',
      dead_letter_reason: expect.stringMatching(/quantity|2\^53/),
    });
    expect((await commissionsOf(merchant.id)).filter((record) => record.order_uuid === poisonUuid)).toEqual([]);
  });

  it('refuses a quantity past the limit at the API: 422, nothing queued', async () => {
    // Act
    const response = await api('live', merchant.tokens.live).post(
      '/api/v2/orders/create',
      orderBody({ order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: Number.MAX_SAFE_INTEGER }] }),
    );

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ 'order_rows.0.quantity': ['The order rows.0.quantity field must not be greater than 1000.'] });
  });

  it('acknowledges a redelivered message without changing the recorded commission', async () => {
    const [before] = (await commissionsOf(merchant.id)).filter((record) => record.order_uuid === orders.alice);
    const alice = messages.find((message) => message.order_uuid === orders.alice)!;
    const response = (await handler(sqsEvent([alice, alice]), lambdaContext(consumer!.id))) as SQSBatchResponse;
    expect(response).toEqual({ batchItemFailures: [] });
    const after = (await commissionsOf(merchant.id)).filter((record) => record.order_uuid === orders.alice);
    expect(after).toEqual([before]);
  });

  it('acknowledges every message of a batch whose failures are all permanent (they are on the DLQ)', async () => {
    const event = sqsEvent([
      messages[0],
      { type: 'order.created', merchant_id: merchant.id, order_uuid: randomUUID() },
      { type: 'something.else' },
    ]);
    const response = (await handler(event, lambdaContext(consumer!.id))) as SQSBatchResponse;
    expect(response.batchItemFailures).toEqual([]);
    expect(await deadLetters()).toHaveLength(2);
  });

  it('deletes like the event source mapping: none when the handler throws or names an unknown message', () => {
    const { Records } = sqsEvent(['a', 'b']);
    expect(messagesToDelete(Records, { response: undefined }).map((record) => record.messageId)).toEqual(['direct-0', 'direct-1']);
    expect(
      messagesToDelete(Records, { response: { batchItemFailures: [{ itemIdentifier: 'direct-1' }] } }).map((record) => record.messageId),
    ).toEqual(['direct-0']);
    expect(messagesToDelete(Records, { response: { batchItemFailures: [{ itemIdentifier: 'unknown' }] } })).toEqual([]);
    expect(messagesToDelete(Records, { error: new Error('boom') })).toEqual([]);
  });
});
