import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { api, orderBody, seedOne, stack } from './helpers';

/** examples/orders.ts, the typed client generated from openapi.json, runs against the local stack. */

const ROOT = resolve(import.meta.dirname, '..', '..');
const TSX = resolve(ROOT, 'node_modules', '.bin', 'tsx');

describe('the typed client example', () => {
  it('creates an order, pages through the orders and cancels the new one', async () => {
    // Prepare
    const merchant = await seedOne();
    const client = api('live', merchant.tokens.live);
    for (const orderNo of ['OLDER-1', 'OLDER-2'])
      expect((await client.post('/api/v2/orders/create', orderBody({ order_no: orderNo }))).status).toBe(201);

    // Act
    const { stdout } = await promisify(execFile)(TSX, ['examples/orders.ts'], {
      cwd: ROOT,
      env: { ...process.env, API_URL: stack.stages.live.url, API_TOKEN: merchant.tokens.live, AFFILIATE_SLUG: 'alice', CURRENCY: 'EUR' },
      timeout: 60_000,
    });

    // Assess
    const uuid = /^created EXAMPLE-\S+ \(([0-9a-f-]{36})\)$/m.exec(stdout)?.[1];
    expect(uuid, stdout).toBeDefined();
    expect(stdout).toMatch(/^page 1\/2: 2 of 3 orders$/m);
    expect(stdout).toMatch(/^page 2\/2: 1 of 3 orders$/m);
    expect(stdout).toMatch(/^cancelled EXAMPLE-\S+ at \d{4}-\d{2}-\d{2}T/m);
    const order = await client.get(`/api/v2/orders/${uuid}`);
    expect(order.body.data.order.cancelled_at).toEqual(expect.any(String));
  });
});
