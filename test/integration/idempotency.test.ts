import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import type { Stage } from '#shared/config';
import { readBlockCounts } from '#shared/db/entities/counter';
import { requestFingerprint } from '#shared/http/request-fingerprint';
import { apiEvent } from '#test/unit/support/api';
import { merchantFixture, orderBody, seed, stack, storeFor, TRACE_ID } from './helpers';

/**
 * Idempotency-Key against the real local stack: DynamoDB Local (conditional writes, one item per
 * merchant and key), the HTTP emulation of API Gateway passing the header through, both envelopes.
 */

let acme: SeededMerchant;
let other: SeededMerchant;

beforeAll(async () => {
  const seeded = await seed([
    merchantFixture({
      key: 'acme',
      affiliate_requests: [{ key: 'bob', affiliate: { slug: 'bob', name: 'Bob', email: `bob-${randomUUID()}@example.com` } }],
    }),
    merchantFixture({ key: 'other' }),
  ]);
  acme = seeded.acme as SeededMerchant;
  other = seeded.other as SeededMerchant;
});

type Answer = { status: number; raw: string; body: any; headers: Headers };

/** One HTTP request with an optional Idempotency-Key; the body exactly as the server sent it. */
const send = async (options: {
  token: string | undefined;
  method?: string;
  path: string;
  body?: unknown;
  raw?: string;
  key?: string;
  stage?: Stage;
}): Promise<Answer> => {
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Authorization: `Bearer ${options.token}`,
    'Content-Type': 'application/json',
  };
  if (options.key !== undefined) headers['Idempotency-Key'] = options.key;
  const response = await fetch(`${stack.stages[options.stage ?? 'live'].url}${options.path}`, {
    method: options.method ?? 'POST',
    headers,
    body: options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const raw = await response.text();
  return { status: response.status, raw, body: raw ? JSON.parse(raw) : undefined, headers: response.headers };
};

const create = (key: string | undefined, body: unknown, token: string | undefined = acme.tokens.live) =>
  send({ token, path: '/api/v2/orders/create', body, key });
const createLegacy = (key: string | undefined, body: unknown) => send({ token: acme.tokens.live, path: '/api/orders/create', body, key });

const live = storeFor('live');
const recordKey = (merchantId: string, key: string) => ({ pk: `M#${merchantId}`, sk: `IDEMPOTENCY#${key}` });
const readRecord = async (merchantId: string, key: string) =>
  (await live.ddb.send(new GetCommand({ TableName: live.table, Key: recordKey(merchantId, key), ConsistentRead: true }))).Item;
/** Committed orders of the merchant: the order list's block counts (added before the create answers). */
const ordersCount = async (merchantId: string) =>
  [...(await readBlockCounts(live, merchantId, 'orders', 'all')).values()].reduce((sum, n) => sum + n, 0);

/** The fingerprint the function computes for this request (method, path, raw body). */
const fingerprintOf = (routeId: 'orders-create' | 'orders-create-legacy', body: unknown) => requestFingerprint(apiEvent(routeId, { body }));

describe('Idempotency-Key on POST /api/v2/orders/create', () => {
  it('replays the first answer byte for byte with Idempotent-Replayed: true, and creates one order', async () => {
    // Prepare
    const key = randomUUID();
    const body = orderBody();
    const countBefore = await ordersCount(acme.id);

    // Act
    const first = await create(key, body);
    const retry = await create(key, body);

    // Assess
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(201);
    expect(retry.raw).toBe(first.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('content-type')).toBe('application/json');
    expect(await ordersCount(acme.id)).toBe(countBefore + 1);
  });

  it("keeps the key's claim, with the request's trace id, under the merchant partition for 24 hours (expires_at, epoch seconds): the order answers a retry, no response is stored", async () => {
    // Prepare
    const key = randomUUID();
    const before = Math.floor(Date.now() / 1000);

    // Act
    const first = await create(key, orderBody());

    // Assess
    const record = await readRecord(acme.id, key);
    expect(record).toMatchObject({ status: 'in_progress', trace_id: first.body.meta.trace_id });
    expect(record).not.toHaveProperty('response_body');
    expect(record!.expires_at).toBeGreaterThanOrEqual(before + 24 * 60 * 60);
    expect(record!.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 24 * 60 * 60);
  });

  it('gives 20 concurrent identical creates with one key exactly one order; every answer is that 201 or 409', async () => {
    // Prepare
    const key = randomUUID();
    const body = orderBody();
    const countBefore = await ordersCount(acme.id);

    // Act
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(key, body)));
    const retry = await create(key, body);

    // Assess
    expect(await ordersCount(acme.id)).toBe(countBefore + 1);
    expect(retry.status).toBe(201);
    const created = answers.filter((answer) => answer.status === 201);
    const conflicts = answers.filter((answer) => answer.status === 409);
    expect(created.length + conflicts.length).toBe(20);
    expect(created.filter((answer) => answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    for (const answer of created) expect(answer.raw).toBe(retry.raw);
    for (const answer of conflicts) {
      expect(answer.body).toEqual({
        success: false,
        data: null,
        errors: { message: ['A request with this idempotency key is still being processed.'] },
        meta: { trace_id: expect.stringMatching(TRACE_ID) },
      });
      expect(answer.headers.get('retry-after')).toBe('1');
    }
  });

  it('answers 422 to the same key with another body, and creates nothing', async () => {
    // Prepare
    const key = randomUUID();
    await create(key, orderBody());
    const countBefore = await ordersCount(acme.id);

    // Act
    const reuse = await create(key, orderBody());

    // Assess
    expect(reuse.status).toBe(422);
    expect(reuse.body).toEqual({
      success: false,
      data: null,
      errors: { message: ['The idempotency key has already been used with a different request.'] },
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
    expect(reuse.headers.get('idempotent-replayed')).toBeNull();
    expect(await ordersCount(acme.id)).toBe(countBefore);
  });

  it('answers 422 to the same key on another route (the path is part of the request)', async () => {
    // Prepare
    const key = randomUUID();
    const first = await create(key, orderBody());

    // Act
    const cancel = await send({ token: acme.tokens.live, path: `/api/v2/orders/${first.body.data.order.uuid}/cancel`, key });

    // Assess
    expect(cancel.status).toBe(422);
    expect(cancel.body.errors).toEqual({ message: ['The idempotency key has already been used with a different request.'] });
  });

  it.each([
    ['empty', '', 'The idempotency key field is required.'],
    ['longer than 255 characters', 'k'.repeat(256), 'The idempotency key field must not be greater than 255 characters.'],
  ])('answers 400 keyed idempotency_key to a key that is %s (a malformed header)', async (_, key, message) => {
    // Act
    const answer = await create(key, orderBody());

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      success: false,
      data: null,
      errors: { idempotency_key: [message] },
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
  });

  it('accepts a key of 255 characters', async () => {
    // Act
    const answer = await create(`k${randomUUID()}`.padEnd(255, 'k'), orderBody());

    // Assess
    expect(answer.status).toBe(201);
  });

  it('stores nothing for a request refused by validation: the corrected request with the same key runs', async () => {
    // Prepare
    const key = randomUUID();
    const body = orderBody();

    // Act
    const malformed = await send({ token: acme.tokens.live, path: '/api/v2/orders/create', raw: '{"order_no":', key });
    const invalid = await create(key, { ...body, order_rows: [] });
    const corrected = await create(key, body);
    const retry = await create(key, body);

    // Assess
    expect([malformed.status, invalid.status, corrected.status, retry.status]).toEqual([422, 422, 201, 201]);
    expect(malformed.headers.get('idempotent-replayed')).toBeNull();
    expect(invalid.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.raw).toBe(corrected.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('replays a stored business 422 byte for byte (order_no taken)', async () => {
    // Prepare
    const taken = orderBody();
    expect((await create(undefined, taken)).status).toBe(201);
    const key = randomUUID();

    // Act
    const first = await create(key, taken);
    const retry = await create(key, taken);

    // Assess
    expect(first.status).toBe(422);
    expect(first.body.errors).toEqual({ order_no: ['The order no has already been taken.'] });
    expect(retry.raw).toBe(first.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('compares the body as JSON: the same body with its keys reordered and other spacing is a replay', async () => {
    // Prepare
    const key = randomUUID();
    const body = orderBody();
    const reordered = Object.fromEntries(Object.entries(body).reverse());

    // Act
    const first = await create(key, body);
    const retry = await send({ token: acme.tokens.live, path: '/api/v2/orders/create', raw: JSON.stringify(reordered, null, 2), key });

    // Assess
    expect(first.status).toBe(201);
    expect(retry.raw).toBe(first.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('keeps keys per merchant: the same key from two merchants is two independent requests', async () => {
    // Prepare
    const key = randomUUID();
    const body = orderBody();

    // Act
    const mine = await create(key, body);
    const theirs = await create(key, body, other.tokens.live);

    // Assess
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.data.order.uuid).not.toBe(mine.body.data.order.uuid);
    expect(await readRecord(acme.id, key)).toMatchObject({ trace_id: mine.body.meta.trace_id });
    expect(await readRecord(other.id, key)).toMatchObject({ trace_id: theirs.body.meta.trace_id });
  });

  it('treats a record past its 24 hours as absent (DynamoDB Local never deletes it): the key is free again', async () => {
    // Prepare
    const key = randomUUID();
    await create(key, orderBody());
    await live.ddb.send(
      new UpdateCommand({
        TableName: live.table,
        Key: recordKey(acme.id, key),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );

    // Act
    const reused = await create(key, orderBody());

    // Assess
    expect(reused.status).toBe(201);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
  });

  it('answers 409 with Retry-After while a request with the key is in flight, and lets a retry take over a crashed one', async () => {
    // Prepare: an in-flight record, as a Lambda that claimed the key and is still running leaves it.
    const key = randomUUID();
    const body = orderBody();
    const inFlight = (until: number) => ({
      ...recordKey(acme.id, key),
      type: 'idempotency',
      status: 'in_progress',
      fingerprint: fingerprintOf('orders-create', body),
      claim_id: 'crashed-lambda',
      in_flight_until: until,
      expires_at: Math.floor(Date.now() / 1000) + 24 * 60 * 60,
    });
    await live.ddb.send(new PutCommand({ TableName: live.table, Item: inFlight(Date.now() + 60_000) }));

    // Act
    const busy = await create(key, body);
    // The Lambda crashed: its lease ran out.
    await live.ddb.send(new PutCommand({ TableName: live.table, Item: inFlight(Date.now() - 1) }));
    const takeover = await create(key, body);

    // Assess
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.body.errors).toEqual({ message: ['A request with this idempotency key is still being processed.'] });
    expect(takeover.status).toBe(201);
    expect(takeover.headers.get('idempotent-replayed')).toBeNull();
    expect(await readRecord(acme.id, key)).toMatchObject({ status: 'in_progress', trace_id: takeover.body.meta.trace_id });
  });

  it('answers a retry after the claim of a finished create ran out of lease from its order, byte for byte, and stores that answer', async () => {
    // Prepare: the create answered; its claim's lease then ran out (as minutes later)
    const key = randomUUID();
    const body = orderBody();
    const first = await create(key, body);
    const countAfterFirst = await ordersCount(acme.id);
    await live.ddb.send(
      new UpdateCommand({
        TableName: live.table,
        Key: recordKey(acme.id, key),
        UpdateExpression: 'SET in_flight_until = :past',
        ExpressionAttributeValues: { ':past': Date.now() - 1 },
      }),
    );

    // Act
    const retry = await create(key, body);

    // Assess
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.raw).toBe(first.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await ordersCount(acme.id)).toBe(countAfterFirst);
    expect(await readRecord(acme.id, key)).toMatchObject({ status: 'completed', response_status: 201, response_body: first.raw });
  });

  it('changes nothing without the header: a second identical create is refused as a duplicate, as the spec says', async () => {
    // Prepare
    const body = orderBody();

    // Act
    const first = await create(undefined, body);
    const second = await create(undefined, body);

    // Assess
    expect(first.status).toBe(201);
    expect(second.status).toBe(422);
    expect(second.body.errors).toEqual({ order_no: ['The order no has already been taken.'] });
    expect(second.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('Idempotency-Key on the legacy POST /api/orders/create', () => {
  it('replays the first answer in the legacy envelope', async () => {
    // Prepare
    const key = randomUUID();
    const body = orderBody();

    // Act
    const first = await createLegacy(key, body);
    const retry = await createLegacy(key, body);

    // Assess
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ success: true, data: { order_no: body.order_no } });
    expect(retry.raw).toBe(first.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers a reused key, a bad key and an in-flight key in the legacy shapes', async () => {
    // Prepare
    const key = randomUUID();
    const body = orderBody();
    await createLegacy(key, body);
    const busyKey = randomUUID();
    await live.ddb.send(
      new PutCommand({
        TableName: live.table,
        Item: {
          ...recordKey(acme.id, busyKey),
          status: 'in_progress',
          fingerprint: fingerprintOf('orders-create-legacy', body),
          claim_id: 'c',
          in_flight_until: Date.now() + 60_000,
          expires_at: Math.floor(Date.now() / 1000) + 60,
        },
      }),
    );

    // Act
    const reused = await createLegacy(key, orderBody());
    const bad = await createLegacy('', body);
    const busy = await createLegacy(busyKey, body);

    // Assess
    expect(reused.status).toBe(422);
    expect(reused.body).toEqual({
      success: false,
      message: 'The given data was invalid.',
      data: { errors: { message: ['The idempotency key has already been used with a different request.'] } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      success: false,
      message: 'The idempotency key field is required.',
      data: { errors: { idempotency_key: ['The idempotency key field is required.'] } },
    });
    expect(busy.status).toBe(409);
    expect(busy.body).toEqual({ success: false, message: 'A request with this idempotency key is still being processed.', data: [] });
  });
});

describe('Idempotency-Key on the other POST routes', () => {
  it('replays a cancel instead of answering "already cancelled"', async () => {
    // Prepare
    const order = await create(undefined, orderBody());
    const key = randomUUID();
    const path = `/api/v2/orders/${order.body.data.order.uuid}/cancel`;

    // Act
    const first = await send({ token: acme.tokens.live, path, key });
    const retry = await send({ token: acme.tokens.live, path, key });
    const withoutKey = await send({ token: acme.tokens.live, path });

    // Assess
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.raw).toBe(first.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(withoutKey.status).toBe(422);
  });

  it('replays an affiliate request acceptance', async () => {
    // Prepare
    const key = randomUUID();
    const path = `/api/v2/affiliate-requests/${acme.affiliate_requests.bob}/accept`;

    // Act
    const first = await send({ token: acme.tokens.live, path, key });
    const retry = await send({ token: acme.tokens.live, path, key });

    // Assess
    expect(first.status).toBe(200);
    expect(retry.raw).toBe(first.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('replays an invitation', async () => {
    // Prepare
    const key = randomUUID();
    const body = { email: `erin-${randomUUID()}@example.com`, sender_email: 'owner@merchant.example' };

    // Act
    const first = await send({ token: acme.tokens.live, path: '/api/v2/affiliates/invite', body, key });
    const retry = await send({ token: acme.tokens.live, path: '/api/v2/affiliates/invite', body, key });

    // Assess
    expect(first.status).toBe(200);
    expect(retry.raw).toBe(first.raw);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('keeps the sandbox stage apart: its records are in its own table', async () => {
    // Prepare
    const sandbox = (await seed([merchantFixture({ key: 'sbx' })], 'sandbox')).sbx as SeededMerchant;
    const key = randomUUID();

    // Act
    const answer = await send({ token: sandbox.tokens.test, path: '/api/v2/orders/create', body: orderBody(), key, stage: 'sandbox' });

    // Assess
    expect(answer.status).toBe(201);
    const sandboxTable = storeFor('sandbox');
    const { Item } = await sandboxTable.ddb.send(
      new GetCommand({ TableName: sandboxTable.table, Key: recordKey(sandbox.id, key), ConsistentRead: true }),
    );
    expect(Item).toMatchObject({ status: 'in_progress', trace_id: answer.body.meta.trace_id });
    expect(await readRecord(sandbox.id, key)).toBeUndefined();
  });
});

/** Every item of a stage's table, as text: a Scan, page by page. */
const everyItem = async (stage: Stage): Promise<string[]> => {
  const { ddb, table } = storeFor(stage);
  const items: string[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(new ScanCommand({ TableName: table, ExclusiveStartKey: startKey, ConsistentRead: true }));
    items.push(...(page.Items ?? []).map((item) => JSON.stringify(item)));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
};

describe('Idempotency-Key on the webhook routes that show a secret', () => {
  it('keeps no secret in plain text: the records hold it sealed, and a replay still shows it', async () => {
    // Prepare
    const [createKey, rotateKey] = [randomUUID(), randomUUID()];
    const body = { url: 'https://example.com/hooks/sealed' };

    // Act
    const created = await send({ token: acme.tokens.live, path: '/api/v2/webhooks', body, key: createKey });
    const createReplay = await send({ token: acme.tokens.live, path: '/api/v2/webhooks', body, key: createKey });
    const rotatePath = `/api/v2/webhooks/${created.body.data.webhook.uuid}/rotate-secret`;
    const rotated = await send({ token: acme.tokens.live, path: rotatePath, key: rotateKey });
    const rotateReplay = await send({ token: acme.tokens.live, path: rotatePath, key: rotateKey });

    // Assess
    expect([created.status, rotated.status]).toEqual([201, 200]);
    expect(created.body.data.webhook.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.webhook.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.webhook.secret).not.toBe(created.body.data.webhook.secret);
    expect([createReplay.raw, createReplay.headers.get('idempotent-replayed')]).toEqual([created.raw, 'true']);
    expect([rotateReplay.raw, rotateReplay.headers.get('idempotent-replayed')]).toEqual([rotated.raw, 'true']);
    const record = await readRecord(acme.id, createKey);
    expect(record).toMatchObject({ status: 'completed', response_sealed: [['data', 'webhook', 'secret']] });
    expect(JSON.parse(String(record?.response_body)).data.webhook.secret).toMatch(/^v1\./);
    const plain = [...(await everyItem('live')), ...(await everyItem('sandbox'))].filter((item) => item.includes('whsec_'));
    expect(plain).toEqual([]);
  });
});
