/**
 * List block counts that drifted (an `ADD` that failed after its commit, or was applied twice by a
 * retry) are recounted from the list indexes: by a follow-up of the change feed for a marked block, by
 * `npm run admin -- recount` for a whole merchant. The orders' blocks derive their counts from the
 * sequence, and are recounted once closed. Against DynamoDB Local and the running stage.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { merchantPk } from '#shared/db/entities/base';
import { BLOCK_SIZE, blockCountKey, countsPartition, markForRecount, ORDER_SEQUENCE_GAP, takeSequence } from '#shared/db/entities/counter';
import { api, eventually, merchantFixture, orderBody, seedOne, storeFor } from './helpers';
import { runAdmin } from './program-helpers';

const store = storeFor('live');

const history = (count: number) =>
  Array.from({ length: count }, (_, index) => ({
    key: `o${index}`,
    created_at: `2026-01-${String(index + 1).padStart(2, '0')}T00:00:00.000Z`,
    order_no: `C-${index}`,
    affiliate_slug: 'alice',
    currency_code: 'EUR',
    total_shipping_value: 0,
    order_rows: [{ product_name: 'Tent', price_value: 100, quantity: 1 }],
  }));

/** The block of a merchant's first orders: their sequence starts past the gap, at a block's first number. */
const FIRST_ORDERS_BLOCK = ORDER_SEQUENCE_GAP / BLOCK_SIZE;

/** Adds `delta` to a list's first block count behind the API's back: what a twice-applied or lost ADD leaves. */
const driftCount = (merchantId: string, list: 'affiliates', bucket: string, delta: number) =>
  store.ddb.send(
    new UpdateCommand({
      TableName: store.table,
      Key: blockCountKey(merchantId, list, bucket, 0),
      UpdateExpression: 'ADD n :delta',
      ExpressionAttributeValues: { ':delta': delta },
    }),
  );

const slugsOf = (body: { data: { affiliates: { slug: string }[] } }) => body.data.affiliates.map((affiliate) => affiliate.slug);

/** Dates the merchant's writes a minute back, its list items' and its block counts' last change: a seed written earlier, its index caught up. */
const writtenAMinuteAgo = async (merchantId: string) => {
  const query = (pk: string) =>
    store.ddb.send(
      new QueryCommand({ TableName: store.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } }),
    );
  const [{ Items: counts = [] }, { Items: items = [] }] = await Promise.all([
    query(countsPartition(merchantId)),
    query(merchantPk(merchantId)),
  ]);
  const minuteAgo = new Date(Date.now() - 60_000).toISOString();
  const backDate = (item: Record<string, unknown>, attribute: string) =>
    store.ddb.send(
      new UpdateCommand({
        TableName: store.table,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET #at = :at',
        ExpressionAttributeNames: { '#at': attribute },
        ExpressionAttributeValues: { ':at': minuteAgo },
      }),
    );
  await Promise.all([
    ...counts.map((item) => backDate(item, 'changed_at')),
    ...items.filter((item) => item.updated_at !== undefined).map((item) => backDate(item, 'updated_at')),
  ]);
};

/** The count item of a merchant's first orders block, read consistently. */
const firstOrderBlock = async (merchantId: string) => {
  const { Items = [] } = await store.ddb.send(
    new QueryCommand({
      TableName: store.table,
      KeyConditionExpression: 'pk = :pk AND sk = :sk',
      ConsistentRead: true,
      ExpressionAttributeValues: {
        ':pk': countsPartition(merchantId),
        ':sk': blockCountKey(merchantId, 'orders', 'all', FIRST_ORDERS_BLOCK).sk,
      },
    }),
  );
  return Items[0];
};

describe('list counts that drifted', () => {
  it('are recounted by a follow-up once their block is marked: total and pages exact again', async () => {
    // Prepare: 2 affiliates, their count 2 too high, its block marked two minutes ago.
    const merchant = await seedOne(merchantFixture({ key: 'drift' }));
    const client = api('live', merchant.tokens.live);
    await driftCount(merchant.id, 'affiliates', 'all', 2);
    expect((await client.get('/api/v2/affiliates?per_page=5')).body.meta.pagination.total).toBe(4);

    // Act
    await markForRecount(store, blockCountKey(merchant.id, 'affiliates', 'all', 0), new Date(Date.now() - 120_000).toISOString());

    // Assess
    const total = await eventually(async () => {
      const { body } = await client.get('/api/v2/affiliates?per_page=5');
      return body.meta.pagination.total === 2 ? body.meta.pagination.total : undefined;
    }, 20_000);
    expect(total).toBe(2);
    const pages = [await client.get('/api/v2/affiliates?per_page=1&page=1'), await client.get('/api/v2/affiliates?per_page=1&page=2')];
    expect(pages.flatMap((page) => slugsOf(page.body)).sort()).toEqual(['alice', 'ivan']);
  });

  it('are recounted, every list of the merchant, by `admin recount`, which prints what it corrected', async () => {
    // Prepare: the affiliates' list (alice, ivan) 1 short, and the gold tier's (alice, and ivan by
    // the merchant's default tier) 4 too high; 3 orders, whose block derives its count.
    const merchant = await seedOne(merchantFixture({ key: 'recount', orders: history(3) }));
    await writtenAMinuteAgo(merchant.id);
    await driftCount(merchant.id, 'affiliates', 'all', -1);
    await driftCount(merchant.id, 'affiliates', 'tier:gold', 4);

    // Act
    const result = await runAdmin('recount', '--merchant', merchant.id);

    // Assess
    expect(result.code).toBe(0);
    expect(result.json).toEqual({
      stage: 'live',
      merchant_id: merchant.id,
      blocks_checked: expect.any(Number),
      corrected: expect.arrayContaining([
        { list: 'affiliates', bucket: 'all', block: 0, before: 1, after: 2 },
        { list: 'affiliates', bucket: 'tier:gold', block: 0, before: 6, after: 2 },
      ]),
      marked_for_later: [],
    });
    expect(result.json.corrected).toHaveLength(2);
    const client = api('live', merchant.tokens.live);
    expect((await client.get('/api/v2/orders')).body.meta.pagination.total).toBe(3);
    expect((await client.get('/api/v2/affiliates')).body.meta.pagination.total).toBe(2);
    expect((await client.get('/api/v2/affiliates?tier_slug=gold')).body.meta.pagination.total).toBe(2);
    expect((await runAdmin('recount', '--merchant', merchant.id)).json.corrected).toEqual([]);
  });

  it('are not recounted by `admin recount` in the seconds after a change, whose item the list index may not show yet: marked for the follow-up instead', async () => {
    // Prepare: an invite created through the API a moment ago (its count stamped now).
    const merchant = await seedOne(merchantFixture({ key: 'recount-recent' }));
    await writtenAMinuteAgo(merchant.id);
    const client = api('live', merchant.tokens.live);
    const invited = await client.post('/api/v2/affiliates/invite', { email: 'nina@example.com', sender_email: 'owner@merchant.example' });
    expect(invited.status).toBe(200);

    // Act
    const result = await runAdmin('recount', '--merchant', merchant.id);

    // Assess: the invites block is left to the follow-up, which recounts it once quiet.
    expect(result.code).toBe(0);
    expect(result.json.marked_for_later).toEqual([{ list: 'invites', bucket: 'all', block: 0 }]);
    expect(result.json.corrected).toEqual([]);
    const total = await eventually(async () => {
      const { body } = await client.get('/api/v2/affiliates/invites');
      return body.meta.pagination.total === 1 ? 1 : undefined;
    });
    expect(total).toBe(1);
  });

  it('count the numbers of creates that stopped before their put until they settled, then note them as holes', {
    timeout: 60_000,
  }, async () => {
    // Prepare: 5 orders
    const merchant = await seedOne(merchantFixture({ key: 'settled', orders: history(5) }));
    const client = api('live', merchant.tokens.live);

    // Act: 3 numbers taken by creates that never put an order
    const first = await takeSequence(store, merchant.id, 'orders', 3);
    const counted = (await client.get('/api/v2/orders')).body.meta.pagination.total;

    // Assess: counted at first (a create may still put), gone once settled
    expect(counted).toBe(8);
    const total = await eventually(async () => {
      const { body } = await client.get('/api/v2/orders');
      return body.meta.pagination.total === 5 ? 5 : undefined;
    }, 40_000);
    expect(total).toBe(5);
    expect((await firstOrderBlock(merchant.id))?.holes).toEqual(new Set([first, first + 1, first + 2]));
  });

  it('count the numbers of creates that stopped before their put until their block closes, then its recount makes it exact', async () => {
    // Prepare: 5 orders, then the rest of their block's numbers taken by creates that never put an order
    const merchant = await seedOne(merchantFixture({ key: 'stopped', orders: history(5) }));
    const client = api('live', merchant.tokens.live);
    await takeSequence(store, merchant.id, 'orders', BLOCK_SIZE - 5);
    expect((await client.get('/api/v2/orders')).body.meta.pagination.total).toBe(BLOCK_SIZE);

    // Act: the next create takes the next block's first number, which closes the block
    expect((await client.post('/api/v2/orders/create', orderBody({ order_no: 'NEXT-1' }))).status).toBe(201);

    // Assess
    const block = await eventually(async () => {
      const item = await firstOrderBlock(merchant.id);
      return item?.exact === true ? item : undefined;
    }, 20_000);
    expect(block).toMatchObject({ n: 5, exact: true });
    expect((await client.get('/api/v2/orders?per_page=2')).body.meta.pagination.total).toBe(6);
    const last = await client.get('/api/v2/orders?per_page=2&page=3');
    expect(last.body.data.orders.map((order: { order_no: string }) => order.order_no)).toEqual(['C-1', 'C-0']);
  });

  it('refuses to recount an unknown merchant: exit 1, one line on stderr', async () => {
    // Act
    const result = await runAdmin('recount', '--merchant', 'no-such-merchant');

    // Assess
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/merchant/);
  });
});
