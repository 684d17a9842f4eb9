import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { merchantPk } from '#shared/db/entities/base';
import { orderKey } from '#shared/db/entities/order';
import { api, drainQueue, eventually, merchantFixture, orderBody, seedOne, sqsClient, stack, storeFor } from './helpers';
import { runAdmin } from './program-helpers';
import { receiver, verified } from './receivers';

/**
 * After the commit, one merchant's input cannot stall another's: texts SQS refuses travel escaped,
 * large events travel by reference, a record the feed cannot read is parked with its content, and
 * the records behind it go on.
 */
const EMOJI = '\u{1F3D5}';
const parkedQueueUrl = () => stack.stages.live.queueUrls.parked;

const merchantWithEndpoint = async () => {
  const merchant = await seedOne(merchantFixture());
  const client = api('live', merchant.tokens.live);
  const inbox = await receiver();
  const created = await client.post('/api/v2/webhooks', { url: inbox.url, events: ['order.created'] });
  expect(created.status).toBe(201);
  return { merchant, client, inbox, secret: created.body.data.webhook.secret as string };
};

const hitFor = (inbox: Awaited<ReturnType<typeof receiver>>, orderUuid: string) => async () =>
  inbox.hits.find((hit) => hit.headers['webhook-id'] === `evt_${orderUuid}_v1`);

describe('the change feed, whatever one merchant sends', () => {
  it('delivers orders with characters SQS refuses (outside the BMP, U+FFFE, U+FFFF) with their text unchanged', async () => {
    // Prepare
    const { client, inbox, secret } = await merchantWithEndpoint();
    const name = `Tent ${EMOJI} \uFFFE\uFFFF`;

    // Act
    const order = await client.post(
      '/api/v2/orders/create',
      orderBody({ order_rows: [{ product_name: name, price_value: 100, quantity: 1 }] }),
    );
    const hit = await eventually(hitFor(inbox, order.body.data.order.uuid));

    // Assess
    expect(order.status).toBe(201);
    expect(verified(secret, hit).data.order.order_rows[0].product_name).toBe(name);
  });

  it('delivers the largest order it accepts (200 rows of 255 characters outside the BMP), its event by reference', async () => {
    // Prepare
    const { client, inbox, secret } = await merchantWithEndpoint();
    const rows = Array.from({ length: 200 }, (_, index) => ({
      product_name: `${String(index).padStart(3, '0')}${EMOJI.repeat(252)}`,
      price_value: 100,
      quantity: 1,
    }));

    // Act
    const order = await client.post('/api/v2/orders/create', orderBody({ order_rows: rows }));
    const hit = await eventually(hitFor(inbox, order.body.data.order.uuid), 20_000);

    // Assess
    expect(order.status).toBe(201);
    const delivered = verified(secret, hit).data.order.order_rows as { product_name: string }[];
    expect(delivered.map((row) => row.product_name)).toEqual(rows.map((row) => row.product_name));
  });

  it('refuses an order too large to store with a 422 on order_rows, never a 500', async () => {
    // Prepare
    const { client } = await merchantWithEndpoint();
    const text = EMOJI.repeat(255);
    const rows = Array.from({ length: 200 }, () => ({
      product_name: text,
      product_sku: text,
      segment_slug: text,
      price_value: 100,
      quantity: 1,
    }));

    // Act
    const order = await client.post('/api/v2/orders/create', orderBody({ order_rows: rows }));

    // Assess
    expect(order.status).toBe(422);
    expect(Object.keys(order.body.errors)).toEqual(['order_rows']);
  });

  it('parks a record it cannot read, with its content, while later orders of another merchant get their events within seconds', async () => {
    // Prepare: a merchant's item the feed cannot read, written behind the API's back.
    await drainQueue(parkedQueueUrl());
    const poisoned = await seedOne(merchantFixture());
    const store = storeFor('live');
    const poisonKey = orderKey(poisoned.id, randomUUID());
    await store.ddb.send(new PutCommand({ TableName: store.table, Item: { ...poisonKey, type: 'order', order_rows: 'not rows' } }));
    const other = await merchantWithEndpoint();

    // Act
    const started = Date.now();
    const created = await Promise.all(Array.from({ length: 5 }, () => other.client.post('/api/v2/orders/create', orderBody())));
    const hits = await Promise.all(created.map((order) => eventually(hitFor(other.inbox, order.body.data.order.uuid))));
    const isPoison = (entry: { key: { pk?: string; sk?: string } | null }) =>
      entry.key?.pk === poisonKey.pk && entry.key?.sk === poisonKey.sk;
    const listed = await eventually(async () => {
      const result = await runAdmin('parked', 'list');
      return result.json?.parked?.some(isPoison) ? result : undefined;
    }, 20_000);

    // Assess
    expect(created.map((order) => order.status)).toEqual([201, 201, 201, 201, 201]);
    expect(Math.max(...hits.map((hit) => hit.at)) - started).toBeLessThan(10_000);
    const entry = listed.json.parked.find(isPoison);
    expect(entry).toMatchObject({ kind: 'change-record', source: 'change-feed', error: 'StoredItemError', event_name: 'INSERT' });
  });

  it('replays a parked change record through the feed (its events sent again), and leaves one it still cannot read parked', async () => {
    // Prepare: a parked INSERT record of a real order, and the unreadable one of the test before.
    const { merchant, client, inbox } = await merchantWithEndpoint();
    const order = await client.post('/api/v2/orders/create', orderBody());
    const uuid = order.body.data.order.uuid as string;
    await eventually(hitFor(inbox, uuid));
    const store = storeFor('live');
    const { Item } = await store.ddb.send(new GetCommand({ TableName: store.table, Key: orderKey(merchant.id, uuid) }));
    const record = {
      eventID: `replay-${uuid}`,
      eventName: 'INSERT',
      dynamodb: {
        Keys: marshall(orderKey(merchant.id, uuid)),
        NewImage: marshall(Item as Record<string, unknown>, { removeUndefinedValues: true }),
        SequenceNumber: '1',
      },
    };
    await sqsClient.send(new SendMessageCommand({ QueueUrl: parkedQueueUrl(), MessageBody: JSON.stringify(record) }));

    // Act
    const replay = await runAdmin('parked', 'replay');
    await eventually(async () =>
      inbox.hits.filter((hit) => hit.headers['webhook-id'] === `evt_${uuid}_v1`).length === 2 ? true : undefined,
    );
    const after = await runAdmin('parked', 'list');

    // Assess
    expect(replay.code).toBe(0);
    expect(replay.json.replayed).toBeGreaterThanOrEqual(1);
    expect(replay.json.left).toContainEqual({ message_id: expect.any(String), why: expect.stringMatching(/^still unreadable/) });
    expect(after.json.parked.map((entry: { key: { pk: string } }) => entry.key.pk)).not.toContain(merchantPk(merchant.id));
  });
});
