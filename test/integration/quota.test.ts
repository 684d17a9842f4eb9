import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { merchantFixture, orderBody, seedOne, stack } from './helpers';
import { runAdmin } from './program-helpers';

/** The per-merchant quota (shared/http/quota.ts), in the request path of the local stage, as deployed. */
const get = (path: string, authorization: string, headers: Record<string, string> = {}) =>
  fetch(`${stack.stages.live.url}${path}`, { headers: { Authorization: authorization, Accept: 'application/json', ...headers } });

const metered = async (rate: number, burst: number) => {
  const merchant = await seedOne(merchantFixture());
  const set = await runAdmin('quota', '--merchant', merchant.id, '--rate', String(rate), '--burst', String(burst));
  expect(set.json).toEqual({ stage: 'live', merchant_id: merchant.id, rate_per_second: rate, burst, source: 'merchant' });
  return merchant;
};

describe('per-merchant quota', () => {
  it('admits a burst, then answers 429 in the route envelope with an honest Retry-After, RateLimit headers on every answer', async () => {
    // Prepare
    const merchant = await metered(1, 3);
    const token = `Bearer ${merchant.tokens.live}`;

    // Act
    const burst = await Promise.all([1, 2, 3].map(() => get('/api/v2/tiers', token)));
    const refused = await get('/api/v2/tiers', token);
    const refusedBody = await refused.json();
    const legacy = await fetch(`${stack.stages.live.url}/api/orders/create`, {
      method: 'POST',
      headers: { Authorization: token },
      body: '{}',
    });
    const wait = Number(refused.headers.get('retry-after'));
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    const afterWaiting = await get('/api/v2/tiers', token);

    // Assess
    expect(burst.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(burst[0]?.headers.get('ratelimit-policy')).toBe('"default";q=3;w=3');
    // The answers of a concurrent burst arrive in any order: one of them left nothing.
    const left = burst.map((response) => Number(response.headers.get('ratelimit')?.match(/r=(\d+)/)?.[1]));
    expect(left.sort()).toEqual([0, 1, 2]);
    expect(refused.status).toBe(429);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(refusedBody).toMatchObject({ success: false, data: null, errors: { message: ['Too Many Attempts.'] } });
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    expect(legacy.status).toBe(429);
    expect(await legacy.json()).toEqual({ success: false, message: 'Too Many Attempts.', data: [] });
    expect(afterWaiting.status).toBe(200);
  });

  it("keys the quota on the merchant: another token or spelling shares it, another merchant's flood leaves it alone", async () => {
    // Prepare
    const merchant = await metered(1, 2);
    const other = await metered(1, 2);
    const minted = await runAdmin('mint-token', '--merchant', merchant.id);

    // Act
    const first = await get('/api/v2/tiers', `Bearer ${merchant.tokens.live}`);
    const secondToken = await get('/api/v2/tiers', `Bearer ${minted.json.token}`);
    const respelled = await get('/api/v2/tiers', `bearer   ${merchant.tokens.live}`);
    const otherMerchant = await get('/api/v2/tiers', `Bearer ${other.tokens.live}`);

    // Assess
    expect([first.status, secondToken.status, respelled.status]).toEqual([200, 200, 429]);
    expect(otherMerchant.status).toBe(200);
  });

  it('puts the headers on a failure too (404), and admits when the quota store is throttled (fail open, never 500)', async () => {
    // Prepare
    const merchant = await seedOne(merchantFixture());
    const token = `Bearer ${merchant.tokens.live}`;

    // Act: the merchant's first request, whose lease meets a throttled table
    const throttled = await get('/api/v2/tiers', token, { 'x-local-faults': 'dynamodb.UpdateItem:throttle=100%' });
    const missing = await get('/api/v2/tiers/no-such-tier', token);

    // Assess
    expect(throttled.status).toBe(200);
    expect(throttled.headers.get('ratelimit-policy')).toMatch(/^"default";q=\d+;w=\d+$/);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
  });

  it('states the rate in RateLimit-Policy and puts both headers on an Idempotency-Key replay, never more left than q', async () => {
    // Prepare: a rate above the burst
    const merchant = await metered(200, 100);
    const create = (key: string, body: unknown) =>
      fetch(`${stack.stages.live.url}/api/v2/orders/create`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${merchant.tokens.live}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': key,
        },
        body: JSON.stringify(body),
      });
    const key = randomUUID();
    const body = orderBody();

    // Act
    const first = await create(key, body);
    const replayed = await create(key, body);

    // Assess
    expect(first.status).toBe(201);
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    for (const answer of [first, replayed]) {
      expect(answer.headers.get('ratelimit-policy')).toBe('"default";q=200;w=1');
      const left = Number(answer.headers.get('ratelimit')?.match(/^"default";r=(\d+);t=\d+$/)?.[1]);
      expect(left).toBeLessThanOrEqual(100);
    }
  });

  it('refuses a create over quota with 429 and stores nothing, though the create reads beside the decision', async () => {
    // Prepare: one token, then nothing for a second
    const merchant = await metered(1, 1);
    const token = `Bearer ${merchant.tokens.live}`;
    const create = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${stack.stages.live.url}/api/v2/orders/create`, {
        method: 'POST',
        headers: { Authorization: token, 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });

    // Act: the first spends the token; a valid one, one naming no affiliate and one with a key come after it
    const admitted = await create(orderBody());
    const refused = await create(orderBody());
    const refusedInvalid = await create(orderBody({ affiliate_slug: 'nobody' }));
    const refusedKeyed = await create(orderBody(), { 'Idempotency-Key': randomUUID() });
    await new Promise((resolve) => setTimeout(resolve, Number(refusedKeyed.headers.get('retry-after')) * 1000));
    const listed = await get('/api/v2/orders', token);

    // Assess: 429 before anything else the request met, and only the admitted order stored
    expect([admitted.status, refused.status, refusedInvalid.status, refusedKeyed.status]).toEqual([201, 429, 429, 429]);
    expect(refused.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { meta: { pagination: { total: number } } }).meta.pagination.total).toBe(1);
  });

  it('lets ops reset a quota to the stage default, and refuses nonsense values with one line', async () => {
    // Prepare
    const merchant = await metered(5, 10);

    // Act
    const reset = await runAdmin('quota', '--merchant', merchant.id, '--reset');
    const refusals = await Promise.all([
      runAdmin('quota', '--merchant', merchant.id, '--rate', '0', '--burst', '10'),
      runAdmin('quota', '--merchant', merchant.id, '--rate', 'lots', '--burst', '10'),
      runAdmin('quota', '--merchant', merchant.id, '--rate', '5'),
      runAdmin('quota', '--merchant', merchant.id, '--rate', '5', '--burst', '20000'),
    ]);

    // Assess
    expect(reset.json).toEqual({ stage: 'live', merchant_id: merchant.id, rate_per_second: 50, burst: 100, source: 'stage default' });
    expect(refusals.map((result) => [result.code, result.stderr.trim().split('\n').length])).toEqual(refusals.map(() => [1, 1]));
    expect(refusals.map((result) => result.stderr)).toEqual([
      expect.stringMatching(/--rate must be a whole number from 1 to 10000/),
      expect.stringMatching(/--rate must be/),
      expect.stringMatching(/--burst must be/),
      expect.stringMatching(/--burst must be/),
    ]);
  });
});
