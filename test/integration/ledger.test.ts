import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueWorkers } from '#functions/workers';
import { lambdaContext } from '#local/apigw';
import { ensureQueues } from '#local/resources';
import { type SqsHandler, toSqsRecord } from '#local/sqs-poller';
import { stageEnvironment } from '#local/stack';
import type { SeededMerchant } from '#shared/admin/seed';
import { getCommissionLedger } from '#shared/db/entities/commission';
import { api, drainQueue, eventually, merchantFixture, orderBody, seedOne, sqsClient, stack, storeFor } from './helpers';
import { runAdmin } from './program-helpers';

/**
 * Every change of an order reaches the commission processor, which keeps one
 * ledger per order. The stack's consumer is off (CONSUMER_POLL=off): the test takes the order
 * events off the live queue and hands them to the consumer's handler itself, in the order it
 * chooses (out of order, twice), as SQS may deliver them.
 */
const [consumer] = queueWorkers();
const savedEnv = { ...process.env };
let handler: SqsHandler;
let merchant: SeededMerchant;
type Event = { type: string; merchant_id: string; order_uuid: string; version: number };

const queueUrl = () => stack.stages.live.ordersQueueUrl;
const client = () => api('live', merchant.tokens.live);

/** This merchant's events for one order, taken off the live queue (waits until `count` arrived). */
const eventsOf = async (orderUuid: string, count: number): Promise<Event[]> => {
  const found: Event[] = [];
  return eventually(async () => {
    found.push(...((await drainQueue(queueUrl())) as Event[]).filter((event) => event.order_uuid === orderUuid));
    return found.length >= count ? found : undefined;
  }, 20_000);
};

let delivery = 0;
const deliver = async (...events: Event[]) => {
  const event: SQSEvent = {
    Records: events.map((body) =>
      toSqsRecord(
        { MessageId: `ledger-${++delivery}`, ReceiptHandle: `h-${delivery}`, Body: JSON.stringify(body) },
        'arn:aws:sqs:us-east-1:000000000000:direct',
        'us-east-1',
      ),
    ),
  };
  const response = (await handler(event, lambdaContext(consumer!.id))) as SQSBatchResponse;
  expect(response).toEqual({ batchItemFailures: [] });
};

/** The ledger as the admin command prints it (a child process: used once per test, it is slow to start). */
const ledgerOf = async (orderUuid: string) => {
  const result = await runAdmin('commission', '--merchant', merchant.id, '--order', orderUuid);
  expect(result.code, result.stderr).toBe(0);
  return result.json;
};

const create = async () => {
  const response = await client().post(
    '/api/v2/orders/create',
    orderBody({ order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: 1 }] }),
  );
  expect(response.status).toBe(201);
  return response.body.data.order.uuid as string;
};

beforeAll(async () => {
  const live = stack.stages.live;
  Object.assign(process.env, stageEnvironment('live', live, stack.endpoints), {
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  handler = ((await import('#functions/commissions/process')) as { handler: SqsHandler }).handler;
  merchant = await seedOne(
    merchantFixture({
      key: 'ledger',
      tiers: [{ slug: 'gold', name: 'Gold', default: true }],
      segments: [{ key: 'default', name: 'Default', default: true, rates: { gold: 10 } }],
      affiliates: [{ slug: 'alice', name: 'Alice', email: 'alice@example.com', tier: 'gold', status: 'active' }],
    }),
  );
  await drainQueue(queueUrl());
});

afterAll(() => {
  process.env = savedEnv;
});

describe('the commission ledger', () => {
  it('accrues on acceptance, records a shipping change at 0, and reverses and voids on cancel', async () => {
    // Prepare: accepted and processed
    const uuid = await create();
    await deliver(...(await eventsOf(uuid, 1)));
    expect((await getCommissionLedger(storeFor('live'), merchant.id, uuid, true)).ledger).toMatchObject({
      status: 'pending',
      net_amount: 1990,
      applied_version: 1,
    });

    // Act: PATCH, then cancel, each processed
    expect((await client().patch(`/api/v2/orders/${uuid}`, { total_shipping_value: 995 })).status).toBe(200);
    const [shipping] = await eventsOf(uuid, 1);
    expect(shipping).toMatchObject({ type: 'order.updated', merchant_id: merchant.id, order_uuid: uuid, version: 2 });
    await deliver(shipping!);
    expect((await client().post(`/api/v2/orders/${uuid}/cancel`)).status).toBe(200);
    const [cancelled] = await eventsOf(uuid, 1);
    expect(cancelled).toMatchObject({ type: 'order.cancelled', merchant_id: merchant.id, order_uuid: uuid, version: 3 });
    await deliver(cancelled!);

    // Assess
    const ledger = await ledgerOf(uuid);
    expect(ledger).toMatchObject({ order_uuid: uuid, status: 'void', net_amount: 0, currency_code: 'EUR' });
    expect(ledger.entries.map((entry: { type: string; amount: number }) => [entry.type, entry.amount])).toEqual([
      ['accrual', 1990],
      ['shipping_change', 0],
      ['reversal', -1990],
    ]);
  }, 60_000);

  it('ends void with nothing accrued when the cancel is delivered before the accept', async () => {
    // Prepare
    const uuid = await create();
    expect((await client().post(`/api/v2/orders/${uuid}/cancel`)).status).toBe(200);
    const events = await eventsOf(uuid, 2);
    const accepted = events.find((event) => event.type === 'order.created')!;
    const cancelled = events.find((event) => event.type === 'order.cancelled')!;

    // Act: the cancel first, then the accept
    await deliver(cancelled);
    await deliver(accepted);

    // Assess
    expect(await ledgerOf(uuid)).toEqual({ order_uuid: uuid, status: 'void', net_amount: 0, currency_code: 'EUR', entries: [] });
  }, 60_000);

  it('counts a duplicate message once, in one batch or in the next', async () => {
    // Prepare
    const uuid = await create();
    const [accepted] = await eventsOf(uuid, 1);

    // Act
    await deliver(accepted!, accepted!);
    await deliver(accepted!);

    // Assess
    const ledger = await ledgerOf(uuid);
    expect(ledger).toMatchObject({ status: 'pending', net_amount: 1990 });
    expect(ledger.entries).toHaveLength(1);
  }, 60_000);

  it('delivers a cancel made while SQS is down through the change feed once SQS is back', async () => {
    // Prepare: accepted and processed, then the queue disappears
    const uuid = await create();
    await deliver(...(await eventsOf(uuid, 1)));
    await sqsClient.send(new DeleteQueueCommand({ QueueUrl: queueUrl() }));
    let recreated = false;
    try {
      // Act: the cancel succeeds; its event waits on the table's stream
      expect((await client().post(`/api/v2/orders/${uuid}/cancel`)).status).toBe(200);
      await ensureQueues(stack.endpoints.sqs, 'live');
      recreated = true;

      // Assess: the change feed sends it, once
      const [cancelled] = await eventsOf(uuid, 1);
      expect(cancelled).toMatchObject({ type: 'order.cancelled', merchant_id: merchant.id, order_uuid: uuid, version: 2 });
      await new Promise((resolve) => setTimeout(resolve, 1500)); // more stream reads: no second copy
      expect((await drainQueue(queueUrl())).filter((event) => event.order_uuid === uuid)).toEqual([]);
      await deliver(cancelled!);
      expect(await ledgerOf(uuid)).toMatchObject({
        status: 'void',
        net_amount: 0,
        entries: [expect.objectContaining({ type: 'accrual' }), expect.objectContaining({ type: 'reversal', amount: -1990 })],
      });
    } finally {
      if (!recreated) await ensureQueues(stack.endpoints.sqs, 'live');
    }
  }, 60_000);

  it('the admin command refuses an order without a ledger: exit 1, one line on stderr, nothing on stdout', async () => {
    // Act
    const result = await runAdmin('commission', '--merchant', merchant.id, '--order', '00000000-0000-4000-8000-000000000000');

    // Assess
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/no commission ledger for order 00000000-0000-4000-8000-000000000000/);
  }, 60_000);
});
