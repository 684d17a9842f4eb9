import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, eventually, merchantFixture, orderBody, seed, stack } from './helpers';
import { receiver, verified } from './receivers';

/**
 * DynamoDB as it really behaves, against the local stack: each request brings its own faults in
 * the x-local-faults header (local/faults.ts), injected below the SDK's retries of the functions'
 * clients, so DynamoDB Local applies or refuses the call as AWS would and the caller sees what AWS
 * sends: throttling, a conflict, a lost answer after an applied write, a function that stops.
 */

let acme: SeededMerchant;

beforeAll(async () => {
  const seeded = await seed([
    merchantFixture({
      key: 'acme',
      affiliate_requests: [
        { key: 'bob', affiliate: { slug: 'bob', name: 'Bob', email: `bob-${randomUUID()}@example.com` } },
        { key: 'carl', affiliate: { slug: 'carl', name: 'Carl', email: `carl-${randomUUID()}@example.com` } },
      ],
    }),
  ]);
  acme = seeded.acme as SeededMerchant;
});

type Answer = { status: number; body: any; headers: Headers };

/** A POST with an optional Idempotency-Key and optional faults for this request only. */
const post = async (path: string, options: { body?: unknown; key?: string; faults?: string } = {}): Promise<Answer> => {
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Authorization: `Bearer ${acme.tokens.live}`,
    'Content-Type': 'application/json',
  };
  if (options.key !== undefined) headers['Idempotency-Key'] = options.key;
  if (options.faults !== undefined) headers['x-local-faults'] = options.faults;
  const response = await fetch(`${stack.stages.live.url}${path}`, {
    method: 'POST',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
};

const create = (body: unknown, options: { key?: string; faults?: string } = {}) => post('/api/v2/orders/create', { body, ...options });

/** The orders list's total, and how many orders it really holds (every page read). */
const ordersTotalAndItems = async () => {
  const client = api('live', acme.tokens.live);
  const first = await client.get('/api/v2/orders?per_page=100');
  let items = first.body.data.orders.length;
  for (let page = 2; page <= first.body.meta.pagination.last_page; page++)
    items += (await client.get(`/api/v2/orders?per_page=100&page=${page}`)).body.data.orders.length;
  return { total: first.body.meta.pagination.total as number, items };
};

/** Waits until the list total equals its items again (the follow-ups recount marked blocks a few seconds after the mark, locally). */
const countsAgree = async () => {
  let last = { total: 0, items: 0 };
  try {
    return await eventually(async () => {
      last = await ordersTotalAndItems();
      return last.total === last.items ? last.total : undefined;
    }, 30_000);
  } catch (error) {
    throw new Error(`The list total stayed ${last.total} for ${last.items} orders listed`, { cause: error });
  }
};

describe('throttling and conflicts', () => {
  it('retries a throttled put of the order and creates the order once', async () => {
    // Act: without a key the order's put is the create's only PutItem.
    const answer = await create(orderBody(), { faults: 'dynamodb.PutItem:throttle=100%x3' });

    // Assess
    expect(answer.status).toBe(201);
    expect((await api('live', acme.tokens.live).get(`/api/v2/orders/${answer.body.data.order.uuid}`)).status).toBe(200);
  });

  it('answers 503 with Retry-After, not 500, when the table stays throttled, and creates nothing', async () => {
    // Prepare
    const body = orderBody();

    // Act
    const answer = await create(body, { faults: 'dynamodb.PutItem:throttle=100%' });
    const retry = await create(body);

    // Assess
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(retry.status).toBe(201);
  });

  it('retries a put that meets a transaction on its item (TransactionConflictException) and creates the order once', async () => {
    const answer = await create(orderBody(), { faults: 'dynamodb.PutItem:conflict=100%x2' });

    expect(answer.status).toBe(201);
  });

  it('answers 503 when DynamoDB refuses connections', async () => {
    const answer = await create(orderBody(), { faults: 'dynamodb:refuse=100%' });

    expect(answer.status).toBe(503);
    expect(answer.body.errors.message).toEqual(['The service is busy. Please retry the request.']);
  });
});

// Each waits up to 30 s for the list counts (countsAgree): the test's own time is longer than that wait.
describe('an applied write whose answer is lost', { timeout: 60_000 }, () => {
  it('answers a keyed retry with the original order, never 422 taken, and the total counts it once', async () => {
    // Prepare
    const body = orderBody();
    const key = randomUUID();

    // Act: every attempt of the order's put (the PutItem after the key's claim) is applied or refused, and no answer arrives.
    const lost = await create(body, { key, faults: 'dynamodb.PutItem:lost=100%+1' });
    const retry = await create(body, { key });
    const again = await create(body, { key });

    // Assess
    expect(lost.status).toBe(503);
    expect(retry.status).toBe(201);
    expect(retry.body.data.order.order_no).toBe(body.order_no);
    expect(again.status).toBe(201);
    expect(again.body.data).toEqual(retry.body.data);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await countsAgree();
  });

  it('answers a keyed retry with the original order at once after the function stopped right after its commit', async () => {
    // Prepare
    const body = orderBody();
    const key = randomUUID();

    // Act: the key stays claimed by the function that died, but the order it committed answers the retry.
    const stopped = await create(body, { key, faults: 'dynamodb.PutItem:stop=100%+1' });
    const retry = await create(body, { key });

    // Assess: API Gateway's answer for a function that died, then the order it had committed.
    expect(stopped.status).toBe(502);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const order = await api('live', acme.tokens.live).get(`/api/v2/orders/${retry.body.data.order.uuid}`);
    expect(order.body.data.order.order_no).toBe(body.order_no);
    await countsAgree();
  });

  it('answers a keyed webhook create re-run after its function stopped with the endpoint it made and its secret, not a second endpoint', async () => {
    // Prepare
    const key = randomUUID();
    const inbox = await receiver();
    const body = { url: inbox.url, events: ['order.created'] };
    const client = api('live', acme.tokens.live);
    const before = (await client.get('/api/v2/webhooks')).body.data.webhooks.length;

    // Act: the endpoint is written, then the function stops before the key's record is kept.
    const stopped = await post('/api/v2/webhooks', { body, key, faults: 'dynamodb.TransactWriteItems:stop=100%' });
    const retry = await eventually(async () => {
      const answer = await post('/api/v2/webhooks', { body, key });
      return answer.status === 409 ? undefined : answer;
    }, 20_000);
    const webhook = retry.body.data.webhook as { uuid: string; secret: string };
    await post(`/api/v2/webhooks/${webhook.uuid}/test`);
    // The merchant's orders of the tests before may reach the new endpoint too (it takes order.created).
    const hit = await eventually(async () => inbox.hits.find((candidate) => JSON.parse(candidate.body).type === 'webhook.test'));

    // Assess: one endpoint more, the retry's, and the secret answered signs its deliveries.
    expect(stopped.status).toBe(502);
    expect(retry.status).toBe(201);
    const after = (await client.get('/api/v2/webhooks')).body.data.webhooks as { uuid: string; url: string }[];
    expect(after).toHaveLength(before + 1);
    expect(after.filter((endpoint) => endpoint.url === body.url).map((endpoint) => endpoint.uuid)).toEqual([webhook.uuid]);
    expect(verified(webhook.secret, hit).type).toBe('webhook.test');
    for (const delivery of inbox.hits) expect(() => verified(webhook.secret, delivery)).not.toThrow();
  });

  it('counts an order once when its first create stopped between taking its order number and its put, and the retry created it', async () => {
    // Prepare: the merchant's order sequence is started by an earlier create
    expect((await create(orderBody())).status).toBe(201);
    const body = orderBody();

    // Act: the create's first UpdateItem applied takes its order number; the function stops right after it.
    const stopped = await create(body, { faults: 'dynamodb.UpdateItem:stop=100%' });
    const retry = await create(body);

    // Assess: the number the stopped create took names no order once it settled, so it stops counting.
    expect(stopped.status).toBe(502);
    expect(retry.status).toBe(201);
    await countsAgree();
  });

  it('keeps the spec answer for an unkeyed retry (422 taken) and still counts the order once', async () => {
    // Prepare
    const body = orderBody();

    // Act
    const stopped = await create(body, { faults: 'dynamodb.PutItem:stop=100%' });
    const retry = await create(body);

    // Assess
    expect(stopped.status).toBe(502);
    expect(retry.status).toBe(422);
    expect(retry.body.errors.order_no).toEqual(['The order no has already been taken.']);
    await countsAgree();
  });

  it('recognises its own cancel applied by an attempt whose answer was lost (200, not 422 already cancelled)', async () => {
    // Prepare
    const created = await create(orderBody());
    const uuid = created.body.data.order.uuid;

    // Act: the first UpdateItem is the cancel; its answer is lost and the SDK retries it.
    const cancelled = await post(`/api/v2/orders/${uuid}/cancel`, { faults: 'dynamodb.UpdateItem:lost=100%x1' });
    const twice = await post(`/api/v2/orders/${uuid}/cancel`);

    // Assess
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.order.cancelled_at).toEqual(expect.any(String));
    expect(twice.status).toBe(422);
    expect(twice.body.errors.message).toEqual(['The order is already cancelled.']);
  });

  it('recognises its own decline applied by an attempt whose answer was lost', async () => {
    const declined = await post(`/api/v2/affiliate-requests/${acme.affiliate_requests.bob}/decline`, {
      faults: 'dynamodb.UpdateItem:lost=100%x1',
    });

    expect(declined.status).toBe(200);
    expect(declined.body.data.affiliate_request.status).toBe('declined');
  });

  it('claims its Idempotency-Key although the SDK retried the claim after a lost answer (not 409)', async () => {
    // Act: the first PutItem is the key's claim.
    const answer = await create(orderBody(), { key: randomUUID(), faults: 'dynamodb.PutItem:lost=100%x1' });

    // Assess
    expect(answer.status).toBe(201);
  });
});

describe('the x-local-faults header', () => {
  it('answers 400 naming the rule when it does not parse', async () => {
    const answer = await create(orderBody(), { faults: 'dynamodb:melt=5%' });

    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('dynamodb:melt=5%');
  });
});
