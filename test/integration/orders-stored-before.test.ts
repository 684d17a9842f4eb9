/**
 * Orders stored before order keys were derived from order_no (a random uuid and an `ORDER_NO#`
 * guard item beside the order, which is how the seed imports an order with a fixed uuid) keep working: they are
 * read, changed and cancelled by their uuid, and their order_no stays taken for every create.
 * So do the lists of a merchant whose orders an older sequence counter numbered.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { BLOCK_SIZE, ORDER_SEQUENCE_GAP } from '#shared/db/entities/counter';
import { orderKey, orderUuidFor } from '#shared/db/entities/order';
import { orderNoKey } from '#shared/db/entities/order-no';
import { quotaKey } from '#shared/db/entities/quota';
import { api, merchantFixture, orderBody, seedOne, storeFor } from './helpers';

const row = { product_name: 'Tent', price_value: 100, quantity: 1 };
const TAKEN = ['The order no has already been taken.'];

let merchant: SeededMerchant;
const live = () => api('live', merchant.tokens.live);
const total = async () => (await live().get('/api/v2/orders?per_page=1')).body.meta.pagination.total as number;

beforeAll(async () => {
  merchant = await seedOne(
    merchantFixture({
      key: 'before',
      orders: [
        {
          key: 'kept',
          uuid: randomUUID(),
          order_no: 'BEFORE-1',
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 0,
          order_rows: [row],
        },
        {
          key: 'patched',
          uuid: randomUUID(),
          order_no: 'BEFORE-2',
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 0,
          order_rows: [row],
        },
        {
          key: 'cancelled',
          uuid: randomUUID(),
          order_no: 'BEFORE-3',
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 0,
          order_rows: [row],
        },
      ],
    }),
  );
});

describe('an order stored before derived keys', () => {
  it('is stored the old way: under a random uuid, not the one derived from its order_no, with an order_no guard naming it', async () => {
    // Prepare
    const { ddb, table } = storeFor('live');

    // Act
    const guard = await ddb.send(new GetCommand({ TableName: table, Key: orderNoKey(merchant.id, 'BEFORE-1'), ConsistentRead: true }));
    const derived = await ddb.send(
      new GetCommand({ TableName: table, Key: orderKey(merchant.id, orderUuidFor(merchant.id, 'BEFORE-1')), ConsistentRead: true }),
    );

    // Assess
    expect(merchant.orders.kept).not.toBe(orderUuidFor(merchant.id, 'BEFORE-1'));
    expect(guard.Item).toMatchObject({ type: 'order_no', order_uuid: merchant.orders.kept });
    expect(derived.Item).toBeUndefined();
  });

  it('answers GET by its uuid', async () => {
    // Act
    const res = await live().get(`/api/v2/orders/${merchant.orders.kept}`);

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data.order).toMatchObject({ uuid: merchant.orders.kept, order_no: 'BEFORE-1', cancelled_at: null });
  });

  it('takes a PATCH of its shipping value', async () => {
    // Act
    const res = await live().patch(`/api/v2/orders/${merchant.orders.patched}`, { total_shipping_value: 1234 });

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data.order).toMatchObject({ uuid: merchant.orders.patched, order_no: 'BEFORE-2', total_shipping_value: 1234 });
    expect((await live().get(`/api/v2/orders/${merchant.orders.patched}`)).body.data.order.total_shipping_value).toBe(1234);
  });

  it('is cancelled once: 200, then 422 already cancelled', async () => {
    // Act
    const first = await live().post(`/api/v2/orders/${merchant.orders.cancelled}/cancel`);
    const second = await live().post(`/api/v2/orders/${merchant.orders.cancelled}/cancel`);

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data.order.cancelled_at).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/));
    expect(second.status).toBe(422);
    expect(second.body.errors).toEqual({ message: ['The order is already cancelled.'] });
  });

  it('keeps its order_no taken for V2 and legacy creates, concurrent ones included, and the list counts nothing more', async () => {
    // Prepare
    const before = await total();

    // Act
    const v2 = await live().post('/api/v2/orders/create', orderBody({ order_no: 'BEFORE-1' }));
    const legacy = await live().post('/api/orders/create', orderBody({ order_no: 'BEFORE-1' }));
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => live().post('/api/v2/orders/create', orderBody({ order_no: 'BEFORE-2' }))),
    );

    // Assess
    expect(v2.status).toBe(422);
    expect(v2.body.errors).toEqual({ order_no: TAKEN });
    expect(legacy.status).toBe(422);
    expect(legacy.body.data.errors).toEqual({ order_no: TAKEN });
    expect(racing.map((res) => res.status)).toEqual(Array(6).fill(422));
    expect(await total()).toBe(before);
    const { ddb, table } = storeFor('live');
    const derived = await ddb.send(
      new GetCommand({ TableName: table, Key: orderKey(merchant.id, orderUuidFor(merchant.id, 'BEFORE-1')), ConsistentRead: true }),
    );
    expect(derived.Item).toBeUndefined();
  });

  it('lives beside orders created now: a new order_no gets its derived uuid, is listed with the old ones, and is taken in turn', async () => {
    // Prepare
    const before = await total();

    // Act
    const created = await live().post('/api/v2/orders/create', orderBody({ order_no: 'AFTER-1' }));
    const again = await live().post('/api/orders/create', orderBody({ order_no: 'AFTER-1' }));

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data.order.uuid).toBe(orderUuidFor(merchant.id, 'AFTER-1'));
    expect(again.status).toBe(422);
    expect(again.body.data.errors).toEqual({ order_no: TAKEN });
    expect(await total()).toBe(before + 1);
    const listed = (await live().get('/api/v2/orders?per_page=100')).body.data.orders.map((order: { uuid: string }) => order.uuid);
    expect(listed).toEqual(expect.arrayContaining([created.body.data.order.uuid, merchant.orders.kept, merchant.orders.patched]));
  });
});

describe('an order seeded without a fixed uuid', () => {
  it('is stored as the API stores it: under the uuid derived from its order_no, with no guard, and its order_no is taken', async () => {
    // Prepare
    const seeded = await seedOne(
      merchantFixture({
        key: 'derived',
        orders: [
          { key: 'o', order_no: 'SEEDED-1', affiliate_slug: 'alice', currency_code: 'EUR', total_shipping_value: 0, order_rows: [row] },
        ],
      }),
    );
    const client = api('live', seeded.tokens.live);
    const { ddb, table } = storeFor('live');

    // Act
    const guard = await ddb.send(new GetCommand({ TableName: table, Key: orderNoKey(seeded.id, 'SEEDED-1'), ConsistentRead: true }));
    const read = await client.get(`/api/v2/orders/${seeded.orders.o}`);
    const again = await client.post('/api/v2/orders/create', orderBody({ order_no: 'SEEDED-1' }));
    const listed = (await client.get('/api/v2/orders')).body;

    // Assess
    expect(seeded.orders.o).toBe(orderUuidFor(seeded.id, 'SEEDED-1'));
    expect(guard.Item).toBeUndefined();
    expect(read.status).toBe(200);
    expect(read.body.data.order).toMatchObject({ uuid: seeded.orders.o, order_no: 'SEEDED-1' });
    expect(again.status).toBe(422);
    expect(again.body.errors).toEqual({ order_no: TAKEN });
    expect(listed.meta.pagination.total).toBe(1);
    expect(listed.data.orders.map((order: { uuid: string }) => order.uuid)).toEqual([seeded.orders.o]);
  });
});

describe('a merchant whose orders were numbered by the older COUNTER#orders', () => {
  let older: SeededMerchant;
  /** The last number the older counter handed out (the seeded orders'). */
  let counted: number;
  const client = () => api('live', older.tokens.live);

  beforeAll(async () => {
    // Prepare: three orders seeded, then their sequence moved back to where it was kept before the
    // quota item held it: a `COUNTER#orders` item, and no `orders_seq` on the quota item.
    older = await seedOne(
      merchantFixture({
        key: 'older-counter',
        orders: ['OLD-1', 'OLD-2', 'OLD-3'].map((order_no, index) => ({
          key: `o${index}`,
          order_no,
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 0,
          order_rows: [row],
        })),
      }),
    );
    const { ddb, table } = storeFor('live');
    const { Item } = await ddb.send(new GetCommand({ TableName: table, Key: quotaKey(older.id), ConsistentRead: true }));
    counted = Item?.orders_seq as number;
    await ddb.send(
      new PutCommand({ TableName: table, Item: { pk: `M#${older.id}`, sk: 'COUNTER#orders', type: 'counter', seq: counted } }),
    );
    await ddb.send(new UpdateCommand({ TableName: table, Key: quotaKey(older.id), UpdateExpression: 'REMOVE orders_seq, seq_taken' }));
  });

  it('numbers its next orders past that counter by a gap, lists them first, and counts every order once', async () => {
    // Act: concurrent creates, V2 and legacy, each the merchant's first with this code
    const created = await Promise.all([
      client().post('/api/v2/orders/create', orderBody({ order_no: 'NEW-1' })),
      client().post('/api/orders/create', orderBody({ order_no: 'NEW-2' })),
      client().post('/api/v2/orders/create', orderBody({ order_no: 'NEW-3' })),
    ]);

    // Assess
    expect(created.map((res) => res.status)).toEqual([201, 201, 201]);
    const { ddb, table } = storeFor('live');
    const { Item } = await ddb.send(new GetCommand({ TableName: table, Key: quotaKey(older.id), ConsistentRead: true }));
    // Started at the first number of the block the counter + the gap falls in: three numbers taken from there.
    expect(Item?.orders_seq).toBe(Math.floor((counted + ORDER_SEQUENCE_GAP) / BLOCK_SIZE) * BLOCK_SIZE + 2);
    const page = (await client().get('/api/v2/orders?per_page=100')).body;
    expect(page.meta.pagination.total).toBe(6);
    const listed = page.data.orders.map((order: { order_no: string }) => order.order_no);
    expect([listed.slice(0, 3).sort(), listed.slice(3).sort()]).toEqual([
      ['NEW-1', 'NEW-2', 'NEW-3'],
      ['OLD-1', 'OLD-2', 'OLD-3'],
    ]);
  });
});
