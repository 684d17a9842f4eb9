import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureQueues } from '#local/resources';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, drainQueue, eventually, merchantFixture, orderBody, seedOne, sqsClient, stack } from './helpers';

let merchant: SeededMerchant;
const queueUrl = () => stack.stages.live.ordersQueueUrl;

beforeAll(async () => {
  merchant = await seedOne(merchantFixture({ key: 'queue' }));
  await drainQueue(queueUrl());
});

describe('the orders queue', () => {
  it('carries exactly one message per accepted order, and none for refused ones', async () => {
    const client = api('live', merchant.tokens.live);
    const accepted: string[] = [];
    for (let index = 0; index < 3; index++) {
      const res = await client.post('/api/v2/orders/create', orderBody());
      accepted.push(res.body.data.order.uuid);
    }
    const legacy = await client.post('/api/orders/create', orderBody());
    accepted.push(legacy.body.data.uuid);
    expect((await client.post('/api/v2/orders/create', orderBody({ affiliate_slug: 'ivan' }))).status).toBe(422);

    // The change feed reads the stream a few times a second: wait until all arrived, then a little
    // longer, since a message must not be sent twice.
    const messages = await eventually(async () => {
      const drained = await drainQueue(queueUrl());
      return drained.length > 0 ? drained : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    messages.push(...(await drainQueue(queueUrl())));
    expect(messages.map((message) => message.order_uuid).sort()).toEqual([...accepted].sort());
    for (const message of messages)
      expect(message).toEqual({
        id: `evt_${message.order_uuid}_v1`,
        type: 'order.created',
        timestamp: expect.any(String),
        merchant_id: merchant.id,
        order_uuid: expect.any(String),
        version: 1,
      });
  });

  it('delivers an order accepted while SQS fails once SQS works again', async () => {
    await sqsClient.send(new DeleteQueueCommand({ QueueUrl: queueUrl() }));
    let recreated = false;
    try {
      const res = await api('live', merchant.tokens.live).post('/api/v2/orders/create', orderBody());
      expect(res.status).toBe(201);
      const uuid = res.body.data.order.uuid;

      await ensureQueues(stack.endpoints.sqs, 'live');
      recreated = true;
      const delivered = await eventually(async () => {
        const messages = await drainQueue(queueUrl());
        return messages.length > 0 ? messages : undefined;
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      delivered.push(...(await drainQueue(queueUrl())));
      expect(delivered.map((message) => message.order_uuid)).toEqual([uuid]);
    } finally {
      if (!recreated) await ensureQueues(stack.endpoints.sqs, 'live');
    }
  });
});
