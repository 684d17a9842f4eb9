import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { eventPosition } from '#shared/db/entities/event-log';
import { encodeCursor } from '#shared/domain/event-cursor';
import { EVENTS_MESSAGES } from '#shared/schemas/events';
import { api, eventually, merchantFixture, orderBody, seedOne, stack } from './helpers';

/**
 * GET /api/v2/events: the merchant's event log, read by polling, against the local stack's own
 * change feed. What must hold: a consumer that keeps passing next_cursor sees every event once,
 * in order, even while orders are being written.
 */
type Client = ReturnType<typeof api>;
type Event = { id: string; type: string; timestamp: string; data: Record<string, any> };

/** Reads the log from `after` up to where it stands now: every page until has_more is false. */
const readOn = async (client: Client, after: string | undefined, query = '') => {
  const events: Event[] = [];
  let cursor = after;
  for (;;) {
    const response = await client.get(`/api/v2/events?limit=100${query}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
    expect(response.status).toBe(200);
    events.push(...response.body.data);
    cursor = response.body.meta.next_cursor;
    expect(typeof cursor).toBe('string');
    if (!response.body.meta.has_more) return { events, cursor: cursor as string };
  }
};

const newMerchant = async () => {
  const merchant = await seedOne(merchantFixture());
  return { merchant, client: api('live', merchant.tokens.live) };
};

describe('the event log', () => {
  it('gives a consumer polling during 200 concurrent creates every event exactly once, never one behind a cursor it already had', async () => {
    // Prepare
    const { client } = await newMerchant();
    const seen: Event[] = [];
    let cursor: string | undefined;
    let writing = true;
    const poller = (async () => {
      while (writing || seen.filter((event) => event.type === 'order.created').length < 200) {
        const page = await readOn(client, cursor);
        seen.push(...page.events);
        cursor = page.cursor;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    // Act: 200 creates, 20 at a time (the local emulator times out beyond that); one answered 503 is sent again
    const bodies = Array.from({ length: 200 }, () => orderBody());
    const statuses: number[] = [];
    const writers = Array.from({ length: 20 }, async (_, writer) => {
      for (let index = writer; index < bodies.length; index += 20) {
        let response = await client.post('/api/v2/orders/create', bodies[index]);
        while (response.status === 503) response = await client.post('/api/v2/orders/create', bodies[index]);
        statuses.push(response.status);
      }
    });
    await Promise.all(writers);
    writing = false;
    await Promise.race([
      poller,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the poller never saw 200 creates')), 90_000)),
    ]);
    const fresh = await readOn(client, undefined);

    // Assess
    // A create sent again after a 503 that had applied meanwhile is refused as a duplicate order_no: it exists either way.
    expect(statuses.every((status) => status === 201 || status === 422)).toBe(true);
    const ids = seen.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    const createdNos = seen.filter((event) => event.type === 'order.created').map((event) => event.data.order.order_no);
    expect(createdNos.sort()).toEqual(bodies.map((body) => body.order_no).sort());
    // Read again from the start, the log holds what the poller saw, in the same order: nothing was inserted behind it.
    expect(fresh.events.map((event) => event.id).slice(0, ids.length)).toEqual(ids);
  }, 180_000);

  it('shows events as webhooks deliver them, oldest first: an order created, then changed, then cancelled', async () => {
    // Prepare
    const { client } = await newMerchant();
    const order = (await client.post('/api/v2/orders/create', orderBody())).body.data.order;

    // Act
    await client.patch(`/api/v2/orders/${order.uuid}`, { total_shipping_value: 595 });
    await client.post(`/api/v2/orders/${order.uuid}/cancel`);
    const events = await eventually(async () => {
      const page = await readOn(client, undefined);
      return page.events.some((event) => event.type === 'order.cancelled') ? page.events : undefined;
    }, 30_000);

    // Assess
    // (The commission consumer does not poll in this suite: commission events are the planner's, test/unit/event-log.test.ts.)
    expect(events.map((event) => [event.id, event.type])).toEqual([
      [`evt_${order.uuid}_v1`, 'order.created'],
      [`evt_${order.uuid}_v2`, 'order.updated'],
      [`evt_${order.uuid}_v3`, 'order.cancelled'],
    ]);
    const first = events[0] as Event;
    expect(Object.keys(first).sort()).toEqual(['data', 'id', 'timestamp', 'type']);
    expect(first.data.order.uuid).toBe(order.uuid);
  }, 60_000);

  it('filters by types and creation time, and keeps a cursor on an empty page to poll on from', async () => {
    // Prepare
    const { client } = await newMerchant();
    const order = (await client.post('/api/v2/orders/create', orderBody())).body.data.order;
    await client.post(`/api/v2/orders/${order.uuid}/cancel`);
    await eventually(async () => ((await readOn(client, undefined)).events.length >= 2 ? true : undefined), 30_000);

    // Act
    const cancelled = await readOn(client, undefined, '&types=order.cancelled,invite.sent');
    const future = await client.get(`/api/v2/events?created_gte=${encodeURIComponent(new Date(Date.now() + 3600_000).toISOString())}`);
    const past = await client.get('/api/v2/events?created_lt=2020-01-01T00:00:00Z');
    const caughtUp = await readOn(client, undefined);
    const after = await client.get(`/api/v2/events?after=${encodeURIComponent(caughtUp.cursor)}`);

    // Assess
    expect(cancelled.events.map((event) => event.id)).toEqual([`evt_${order.uuid}_v2`]);
    expect(future.body.data).toEqual([]);
    expect(past.body.data).toEqual([]);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual([]);
    expect(after.body.meta).toEqual(expect.objectContaining({ has_more: false, next_cursor: expect.any(String) }));
  }, 60_000);

  it('keeps merchants and stages apart: each reads only its own log, and a cursor of another is a 422 on after', async () => {
    // Prepare
    const { merchant, client } = await newMerchant();
    const other = await newMerchant();
    const order = (await client.post('/api/v2/orders/create', orderBody())).body.data.order;
    const mine = await eventually(async () => {
      const page = await readOn(client, undefined);
      return page.events.length > 0 ? page : undefined;
    }, 30_000);
    const inSandbox = await seedOne(merchantFixture({ id: merchant.id }), 'sandbox');
    const sandbox = api('sandbox', inSandbox.tokens.test);

    // Act
    const theirs = await readOn(other.client, undefined);
    const foreign = await other.client.get(`/api/v2/events?after=${encodeURIComponent(mine.cursor)}`);
    const otherStage = await sandbox.get(`/api/v2/events?after=${encodeURIComponent(mine.cursor)}`);
    const sandboxLog = await sandbox.get('/api/v2/events');

    // Assess
    expect(mine.events.map((event) => event.id)).toContain(`evt_${order.uuid}_v1`);
    expect(theirs.events).toEqual([]);
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors).toEqual({ after: [EVENTS_MESSAGES.badCursor] });
    expect(otherStage.status).toBe(422);
    expect(otherStage.body.errors).toEqual({ after: [EVENTS_MESSAGES.badCursor] });
    expect(sandboxLog.body.data).toEqual([]);
  }, 60_000);

  it('refuses a bad limit, unknown types, a malformed time or an empty window, a garbled cursor and an expired one, each keyed by its field', async () => {
    // Prepare
    const { merchant, client } = await newMerchant();
    const expired = encodeCursor('live', merchant.id, {
      position: eventPosition('1', 0),
      since: Math.floor(Date.now() / 1000) - 31 * 24 * 3600,
    });

    // Act
    const answers = await Promise.all(
      [
        'limit=0',
        'limit=101',
        'limit=1.5',
        'limit=1e2',
        'limit=01',
        'types=order.created,order.deleted',
        'types=webhook.test',
        'created_gte=yesterday',
        // In UTC the year 10000, which the stored times (and so the comparison) cannot hold.
        `created_lt=${encodeURIComponent('9999-12-31T23:59:59-23:59')}`,
        'created_gte=2026-11-02T00:00:00Z&created_lt=2026-11-01T00:00:00Z',
        'after=garbage',
        `after=${encodeURIComponent(expired)}`,
      ].map((query) => client.get(`/api/v2/events?${query}`)),
    );

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(422));
    expect(answers.map((answer) => Object.keys(answer.body.errors)[0])).toEqual([
      'limit',
      'limit',
      'limit',
      'limit',
      'limit',
      'types',
      'types',
      'created_gte',
      'created_lt',
      'created_lt',
      'after',
      'after',
    ]);
    expect(answers[11]?.body.errors.after).toEqual([EVENTS_MESSAGES.expiredCursor]);
  });

  it('examples/poll-events.ts prints each event once across runs, keeping its cursor in a file', async () => {
    // Prepare
    const { merchant, client } = await newMerchant();
    const first = (await client.post('/api/v2/orders/create', orderBody())).body.data.order;
    await eventually(async () => ((await readOn(client, undefined)).events.length >= 1 ? true : undefined), 30_000);
    const root = resolve(import.meta.dirname, '..', '..');
    const cursorFile = join(mkdtempSync(join(tmpdir(), 'poll-events-')), 'cursor');
    const run = async () =>
      (
        await promisify(execFile)(resolve(root, 'node_modules', '.bin', 'tsx'), ['examples/poll-events.ts'], {
          cwd: root,
          env: { ...process.env, API_URL: stack.stages.live.url, API_TOKEN: merchant.tokens.live, CURSOR_FILE: cursorFile },
          timeout: 60_000,
        })
      ).stdout;

    // Act
    const firstRun = await run();
    const second = (await client.post('/api/v2/orders/create', orderBody())).body.data.order;
    await eventually(async () => ((await readOn(client, undefined)).events.length >= 2 ? true : undefined), 30_000);
    const secondRun = await run();

    // Assess
    expect(
      firstRun
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ')[0]),
    ).toEqual([`evt_${first.uuid}_v1`]);
    expect(
      secondRun
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ')[0]),
    ).toEqual([`evt_${second.uuid}_v1`]);
    expect(readFileSync(cursorFile, 'utf8')).not.toBe('');
  }, 120_000);
});
