import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, DeleteQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent, SQSBatchResponse } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueWorkers } from '../../functions/workers';
import { lambdaContext } from '../../local/apigw';
import { stageEnvironment } from '../../local/stack';
import { createSqsPoller, messagesToDelete, toSqsRecord, type SqsHandler } from '../../local/sqs-poller';
import type { SeededMerchant } from '../../shared/admin/seed';
import { merchantPk } from '../../shared/db/entities/base';
import { commissionKey } from '../../shared/db/entities/commission';
import { api, drainQueue, eventually, merchantFixture, orderBody, seedOne, sqsClient, stack, storeFor } from './helpers';

/**
 * The commission consumer for real: orders created over HTTP put their order.accepted messages on
 * the live queue; the test moves them (plus a duplicate and two bad messages) to a queue of its own
 * and runs the handler through the local poller, as the event source mapping would. The shared
 * stack's own poller is off (global-setup), so the other tests still see every message.
 */
const [consumer] = queueWorkers();
let handler: SqsHandler;
let merchant: SeededMerchant;
let testQueueUrl: string;
const savedEnv = { ...process.env };
const orders: Record<'alice' | 'nora' | 'sam' | 'cancelled', string> = { alice: '', nora: '', sam: '', cancelled: '' };
let messages: { type: string; merchant_id: string; order_uuid: string }[] = [];

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
    toSqsRecord({ MessageId: `direct-${index}`, ReceiptHandle: `handle-${index}`, Body: typeof body === 'string' ? body : JSON.stringify(body) }, 'arn:aws:sqs:us-east-1:000000000000:direct', 'us-east-1'),
  ),
});

beforeAll(async () => {
  const live = stack.stages.live;
  Object.assign(process.env, stageEnvironment('live', { table: live.table, ordersQueueUrl: live.ordersQueueUrl, dlqUrl: live.dlqUrl }, stack.endpoints), {
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  handler = ((await import('../../functions/commissions/process')) as { handler: SqsHandler }).handler;

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
  orders.sam = await create({ affiliate_slug: 'sam', order_rows: [{ product_name: 'Trainers', segment_slug: 'SHOES', price_value: 5999, quantity: 3 }] });
  orders.nora = await create({ affiliate_slug: 'nora', order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: 1 }] });
  orders.cancelled = await create({ affiliate_slug: 'alice', order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: 1 }] });
  expect((await client.post(`/api/v2/orders/${orders.cancelled}/cancel`)).status).toBe(200);

  messages = (await eventually(async () => {
    const mine = (await drainQueue(live.ordersQueueUrl)).filter((message) => message.merchant_id === merchant.id);
    messages.push(...mine);
    return messages.length >= 4 ? messages : undefined;
  })) as typeof messages;

  // A queue of the test's own, with the visibility timeout short so failed messages come back quickly.
  const name = `commissions-test-${randomUUID().slice(0, 8)}`;
  const dlq = await sqsClient.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const { Attributes } = await sqsClient.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }));
  const queue = await sqsClient.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: { VisibilityTimeout: '1', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: '50' }) },
    }),
  );
  testQueueUrl = queue.QueueUrl as string;
});

afterAll(async () => {
  process.env = savedEnv;
  if (testQueueUrl) await sqsClient.send(new DeleteQueueCommand({ QueueUrl: testQueueUrl })).catch(() => undefined);
});

describe('the commission consumer', () => {
  it('gets exactly one order.accepted message per created order', () => {
    expect(messages.map((message) => message.order_uuid).sort()).toEqual(Object.values(orders).sort());
  });

  it('records one commission per order from the polled queue, counts a duplicate once, and leaves bad messages for redelivery', async () => {
    const alice = messages.find((message) => message.order_uuid === orders.alice)!;
    const bodies = [
      ...messages.map((message) => JSON.stringify(message)),
      JSON.stringify(alice),
      JSON.stringify({ type: 'order.accepted', merchant_id: merchant.id, order_uuid: randomUUID() }),
      'not json',
    ];
    await sqsClient.send(new SendMessageBatchCommand({ QueueUrl: testQueueUrl, Entries: bodies.map((MessageBody, index) => ({ Id: String(index), MessageBody })) }));

    const poller = createSqsPoller({ client: sqsClient, queueUrl: testQueueUrl, handler, functionName: consumer!.id, batchSize: 3, waitTimeSeconds: 0 });
    // Small batches, so the duplicate may land in another batch than its original.
    let deleted = 0;
    for (let round = 0; round < 20 && deleted < bodies.length - 2; round++) deleted += (await poller.pollOnce()).deleted;
    expect(deleted).toBe(bodies.length - 2);

    const records = await commissionsOf(merchant.id);
    expect(records).toHaveLength(4);
    const byOrder = Object.fromEntries(records.map((record) => [record.order_uuid, record]));
    expect(byOrder[orders.alice]).toMatchObject({
      type: 'commission',
      affiliate_slug: 'alice',
      tier_slug: 'gold',
      currency_code: 'EUR',
      status: 'pending',
      total_amount: 2500 + 1990,
      rows: [
        expect.objectContaining({ rate: 12.5, base_value: 20000, amount: 2500 }),
        expect.objectContaining({ rate: 10, base_value: 19900, amount: 1990 }),
      ],
    });
    expect(byOrder[orders.sam]).toMatchObject({ tier_slug: 'silver', total_amount: Math.round((5999 * 3 * 9) / 100), rows: [expect.objectContaining({ rate: 9 })] });
    // nora joined without a tier: the default tier (bronze), which no segment rates
    expect(byOrder[orders.nora]).toMatchObject({ tier_slug: 'bronze', total_amount: 0 });
    expect(byOrder[orders.cancelled]).toMatchObject({ status: 'void', total_amount: 0 });

    // The two bad messages were not deleted: they come back after the visibility timeout.
    const redelivered = new Map<string, string>();
    await eventually(async () => {
      const { Messages = [] } = await sqsClient.send(new ReceiveMessageCommand({ QueueUrl: testQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
      for (const message of Messages) redelivered.set(message.MessageId as string, message.Body as string);
      return redelivered.size >= 2 ? true : undefined;
    });
    expect([...redelivered.values()].sort()).toEqual(bodies.slice(-2).sort());
  });

  it('acknowledges a redelivered message without changing the recorded commission', async () => {
    const [before] = (await commissionsOf(merchant.id)).filter((record) => record.order_uuid === orders.alice);
    const alice = messages.find((message) => message.order_uuid === orders.alice)!;
    const response = (await handler(sqsEvent([alice, alice]), lambdaContext(consumer!.id))) as SQSBatchResponse;
    expect(response).toEqual({ batchItemFailures: [] });
    const after = (await commissionsOf(merchant.id)).filter((record) => record.order_uuid === orders.alice);
    expect(after).toEqual([before]);
  });

  it('reports only the failed messages of a batch', async () => {
    const event = sqsEvent([messages[0], { type: 'order.accepted', merchant_id: merchant.id, order_uuid: randomUUID() }, { type: 'something.else' }]);
    const response = (await handler(event, lambdaContext(consumer!.id))) as SQSBatchResponse;
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'direct-1' }, { itemIdentifier: 'direct-2' }]);
  });

  it('deletes like the event source mapping: none when the handler throws or names an unknown message', () => {
    const { Records } = sqsEvent(['a', 'b']);
    expect(messagesToDelete(Records, { response: undefined }).map((record) => record.messageId)).toEqual(['direct-0', 'direct-1']);
    expect(messagesToDelete(Records, { response: { batchItemFailures: [{ itemIdentifier: 'direct-1' }] } }).map((record) => record.messageId)).toEqual(['direct-0']);
    expect(messagesToDelete(Records, { response: { batchItemFailures: [{ itemIdentifier: 'unknown' }] } })).toEqual([]);
    expect(messagesToDelete(Records, { error: new Error('boom') })).toEqual([]);
  });
});
