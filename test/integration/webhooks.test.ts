import { spawn } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { api, eventually, merchantFixture, orderBody, seedOne, stack } from './helpers';
import { mailsTo, runAdmin } from './program-helpers';
import { type Hit, receiver, signed } from './receivers';

const verifies = (secret: string, hit: Hit) => {
  try {
    new Webhook(secret).verify(hit.body, signed(hit));
    return true;
  } catch {
    return false;
  }
};

const setUp = async (events?: string[]) => {
  const merchant = await seedOne(merchantFixture());
  const client = api('live', merchant.tokens.live);
  return { merchant, client, events };
};

const createEndpoint = async (client: ReturnType<typeof api>, url: string, events?: string[]) => {
  const created = await client.post('/api/v2/webhooks', { url, ...(events ? { events } : {}) });
  expect(created.status).toBe(201);
  return created.body.data.webhook as { uuid: string; secret: string };
};

describe('webhooks', () => {
  it('delivers an order event that the standardwebhooks package verifies, with the order as the API shows it', async () => {
    // Prepare
    const { client } = await setUp();
    const inbox = await receiver();
    const endpoint = await createEndpoint(client, inbox.url, ['order.created']);

    // Act
    const order = await client.post('/api/v2/orders/create', orderBody());
    const hit = await eventually(async () => inbox.hits[0]);

    // Assess
    expect(order.status).toBe(201);
    const payload = new Webhook(endpoint.secret).verify(hit.body, signed(hit)) as { type: string; data: { order: { uuid: string } } };
    expect(payload.type).toBe('order.created');
    expect(payload.data.order.uuid).toBe(order.body.data.order.uuid);
    expect(hit.headers['webhook-id']).toBe(`evt_${order.body.data.order.uuid}_v1`);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  it('retries a receiver that fails three times with the same webhook-id, then records the success', async () => {
    // Prepare
    const { client } = await setUp();
    const inbox = await receiver((index, response) => {
      response.statusCode = index < 3 ? 503 : 200;
      response.end(index < 3 ? 'down' : 'ok');
    });
    const endpoint = await createEndpoint(client, inbox.url);

    // Act
    const test = await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    await eventually(async () => (inbox.hits.length >= 4 ? true : undefined), 20_000);
    const deliveries = await eventually(async () => {
      const page = await client.get(`/api/v2/webhooks/${endpoint.uuid}/deliveries`);
      return page.body.data.deliveries[0]?.status === 'succeeded' ? page : undefined;
    });

    // Assess
    expect(test.status).toBe(202);
    expect(new Set(inbox.hits.map((hit) => hit.headers['webhook-id']))).toEqual(new Set([test.body.data.delivery.event_id]));
    expect(deliveries.body.data.deliveries[0]).toMatchObject({
      event_type: 'webhook.test',
      attempt: 4,
      response_status: 200,
      response_body: 'ok',
    });
    expect((await client.get(`/api/v2/webhooks/${endpoint.uuid}`)).body.data.webhook.failing_since).toBeNull();
  });

  it("disables an endpoint at once when it answers 410 Gone, and e-mails the merchant's users", async () => {
    // Prepare
    const owner = `owner.${Date.now()}@merchant.example`;
    const merchant = await seedOne(merchantFixture({ users: [{ email: owner, name: 'Owner' }] }));
    const client = api('live', merchant.tokens.live);
    const inbox = await receiver((_, response) => {
      response.statusCode = 410;
      response.end('gone');
    });
    const endpoint = await createEndpoint(client, inbox.url);

    // Act
    await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    const disabled = await eventually(async () => {
      const read = await client.get(`/api/v2/webhooks/${endpoint.uuid}`);
      return read.body.data.webhook.enabled === false ? read.body.data.webhook : undefined;
    });
    const mails = await eventually(async () => ((await mailsTo(owner)).length > 0 ? mailsTo(owner) : undefined));

    // Assess
    expect(disabled.disabled_reason).toMatch(/410 Gone/);
    expect(inbox.hits).toHaveLength(1);
    expect(mails[0]?.subject).toBe('Your webhook endpoint was disabled');
  });

  it('lets a hanging endpoint time out without delaying another endpoint of the same merchant', async () => {
    // Prepare
    const { client } = await setUp();
    const hanging = await receiver(() => undefined);
    const healthy = await receiver();
    await createEndpoint(client, hanging.url, ['order.created']);
    await createEndpoint(client, healthy.url, ['order.created']);

    // Act
    const started = Date.now();
    for (let index = 0; index < 6; index++) await client.post('/api/v2/orders/create', orderBody());
    await eventually(async () => (healthy.hits.length >= 6 ? true : undefined), 20_000);

    // Assess
    expect(hanging.hits.length).toBeGreaterThan(0);
    // Six deliveries to the healthy endpoint never waited behind the hanging one's 1.5 s timeouts in turn.
    expect(Math.max(...healthy.hits.map((hit) => hit.at)) - started).toBeLessThan(8000);
  });

  it("retries a hanging endpoint the schedule's wait after its attempt timed out, not after the attempt began", async () => {
    // Prepare: locally a delivery times out after 1.5 s and the schedule's first wait is 1 s (±10 %)
    const { client } = await setUp();
    const hanging = await receiver(() => undefined);
    await createEndpoint(client, hanging.url, ['order.created']);

    // Act
    await client.post('/api/v2/orders/create', orderBody());
    await eventually(async () => (hanging.hits.length >= 2 ? true : undefined), 20_000);

    // Assess: the second attempt came at least the timeout and the wait after the first
    const [first, second] = hanging.hits as [Hit, Hit];
    expect(second.at - first.at).toBeGreaterThanOrEqual(1500 + 900);
  });

  it('signs with both secrets for a day after a rotation, so the old and the new secret verify', async () => {
    // Prepare
    const { client } = await setUp();
    const inbox = await receiver();
    const endpoint = await createEndpoint(client, inbox.url);

    // Act
    const rotated = await client.post(`/api/v2/webhooks/${endpoint.uuid}/rotate-secret`);
    await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    const hit = await eventually(async () => inbox.hits[0]);

    // Assess
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.webhook;
    expect(fresh.secret).not.toBe(endpoint.secret);
    expect(Date.parse(fresh.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect([verifies(fresh.secret, hit), verifies(endpoint.secret, hit)]).toEqual([true, true]);
  });

  it('signs with every secret of the last 24 h after two quick rotations, so the first, second and third secret all verify', async () => {
    // Prepare
    const { client } = await setUp();
    const inbox = await receiver();
    const endpoint = await createEndpoint(client, inbox.url);

    // Act
    const second = await client.post(`/api/v2/webhooks/${endpoint.uuid}/rotate-secret`);
    const third = await client.post(`/api/v2/webhooks/${endpoint.uuid}/rotate-secret`);
    await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    const hit = await eventually(async () => inbox.hits[0]);

    // Assess
    expect([second.status, third.status]).toEqual([200, 200]);
    const secrets = [endpoint.secret, second.body.data.webhook.secret, third.body.data.webhook.secret];
    expect(new Set(secrets).size).toBe(3);
    expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(3);
    expect(secrets.map((secret) => verifies(secret, hit))).toEqual([true, true, true]);
  });

  it('probes an endpoint that fails under a backlog of 30 events one attempt at a time, keeps it enabled, delivers all 30 once it answers and leaves none parked', {
    timeout: 90_000,
  }, async () => {
    // Prepare: the first 12 requests fail (answered after 50 ms), every later one succeeds
    const { client, merchant } = await setUp();
    let open = 0;
    const failing: { openAtArrival: number }[] = [];
    const succeeded = new Set<string>();
    const inbox = await receiver((index, response) => {
      open++;
      const fail = index < 12;
      if (fail) failing.push({ openAtArrival: open });
      setTimeout(() => {
        open--;
        response.statusCode = fail ? 503 : 200;
        response.end(fail ? 'down' : 'ok');
      }, 50);
    });
    const endpoint = await createEndpoint(client, inbox.url);

    // Act
    const sent = await Promise.all(Array.from({ length: 30 }, () => client.post(`/api/v2/webhooks/${endpoint.uuid}/test`)));
    const ids = sent.map((response) => response.body.data.delivery.event_id as string);
    await eventually(async () => {
      for (const hit of inbox.hits.slice(12)) succeeded.add(String(hit.headers['webhook-id']));
      return ids.every((id) => succeeded.has(id)) ? true : undefined;
    }, 80_000);
    const after = (await client.get(`/api/v2/webhooks/${endpoint.uuid}`)).body.data.webhook;
    const deliveries = await eventually(async () => {
      const page = await client.get(`/api/v2/webhooks/${endpoint.uuid}/deliveries?per_page=100`);
      const list = page.body.data.deliveries as { status: string }[];
      return list.length === 30 && list.every((delivery) => delivery.status === 'succeeded') ? list : undefined;
    });

    // Assess: at most the two slots of an endpoint that has not answered yet, then one probe at a time
    expect(failing).toHaveLength(12);
    expect(Math.max(...failing.map((request) => request.openAtArrival))).toBeLessThanOrEqual(2);
    expect(failing.slice(2).map((request) => request.openAtArrival)).toEqual(Array(10).fill(1));
    expect([after.enabled, after.failing_since]).toEqual([true, null]);
    expect(deliveries).toHaveLength(30);
    const listed = await runAdmin('webhooks', 'list', '--merchant', merchant.id);
    expect(listed.json.webhooks[0].parked_deliveries).toBe(0);
  });

  it('recovers only the deliveries that failed, not one delivered after, and resends one, with their original webhook-id', {
    timeout: 60_000,
  }, async () => {
    // Prepare: an endpoint that fails one event until it is fixed, and takes three others
    const { client } = await setUp();
    let fixed = false;
    let failId = '';
    const inbox = await receiver((index, response) => {
      response.statusCode = !fixed && inbox.hits[index]?.headers['webhook-id'] === failId ? 500 : 200;
      response.end();
    });
    const endpoint = await createEndpoint(client, inbox.url);
    const since = new Date(Date.now() - 60_000).toISOString();
    const sent = await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    failId = sent.body.data.delivery.event_id;
    await eventually(async () => {
      const page = await client.get(`/api/v2/webhooks/${endpoint.uuid}/deliveries`);
      return page.body.data.deliveries[0]?.status === 'failed' ? true : undefined;
    }, 25_000);
    for (let index = 0; index < 3; index++) await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    await eventually(async () => (inbox.hits.length === 13 ? true : undefined));
    fixed = true;

    // Act
    const withoutBody = await client.post(`/api/v2/webhooks/${endpoint.uuid}/recover`);
    const recovered = await client.post(`/api/v2/webhooks/${endpoint.uuid}/recover`, { since });
    await eventually(async () => {
      const page = await client.get(`/api/v2/webhooks/${endpoint.uuid}/deliveries`);
      const delivery = (page.body.data.deliveries as { event_id: string; status: string }[]).find((item) => item.event_id === failId);
      return delivery?.status === 'succeeded' ? true : undefined;
    });
    const again = await client.post(`/api/v2/webhooks/${endpoint.uuid}/recover`, {});
    const resent = await client.post(`/api/v2/webhooks/${endpoint.uuid}/deliveries/${failId}/resend`);
    await eventually(async () => (inbox.hits.length === 15 ? true : undefined));

    // Assess
    expect([withoutBody.status, Object.keys(withoutBody.body.errors)]).toEqual([422, ['message']]);
    expect(recovered.status).toBe(202);
    expect(recovered.body.data.recovery).toEqual({ since, queued: 1, next_since: null });
    expect(again.body.data.recovery).toMatchObject({ queued: 0, next_since: null });
    expect(resent.status).toBe(202);
    expect(resent.body.data.delivery.event_id).toBe(failId);
    expect(inbox.hits.slice(13).map((hit) => hit.headers['webhook-id'])).toEqual([failId, failId]);
    const missing = await client.post(`/api/v2/webhooks/${endpoint.uuid}/deliveries/evt_nope/resend`);
    expect(missing.status).toBe(404);
  });

  it('records the events an endpoint missed while the service had it disabled, refuses to send them while it is, and recovers them once it is enabled again', {
    timeout: 60_000,
  }, async () => {
    // Prepare: a receiver that answers 410 Gone until it is fixed; an order created while its endpoint is disabled
    const { client } = await setUp();
    let fixed = false;
    const inbox = await receiver((_index, response) => {
      response.statusCode = fixed ? 200 : 410;
      response.end();
    });
    const endpoint = await createEndpoint(client, inbox.url);
    await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    await eventually(
      async () => ((await client.get(`/api/v2/webhooks/${endpoint.uuid}`)).body.data.webhook.enabled ? undefined : true),
      20_000,
    );
    const created = await client.post('/api/v2/orders/create', orderBody());
    const eventId = `evt_${created.body.data.order.uuid}_v1`;
    const missed = await eventually(async () => {
      const page = await client.get(`/api/v2/webhooks/${endpoint.uuid}/deliveries`);
      return (page.body.data.deliveries as { event_id: string; status: string }[]).find((item) => item.event_id === eventId);
    }, 20_000);
    fixed = true;

    // Act: sending again is refused while disabled (it would send nothing), then works once enabled
    const recoveredWhileDisabled = await client.post(`/api/v2/webhooks/${endpoint.uuid}/recover`, {});
    const resentWhileDisabled = await client.post(`/api/v2/webhooks/${endpoint.uuid}/deliveries/${eventId}/resend`);
    const enabled = await client.patch(`/api/v2/webhooks/${endpoint.uuid}`, { enabled: true });
    const recovered = await client.post(`/api/v2/webhooks/${endpoint.uuid}/recover`, {});
    const hit = await eventually(async () => inbox.hits.find((request) => request.headers['webhook-id'] === eventId), 20_000);

    // Assess
    const refusal = { message: ['The endpoint is disabled: enable it before sending its deliveries again.'] };
    expect([recoveredWhileDisabled.status, recoveredWhileDisabled.body.errors]).toEqual([422, refusal]);
    expect([resentWhileDisabled.status, resentWhileDisabled.body.errors]).toEqual([422, refusal]);
    expect(missed.status).toBe('failed');
    expect(enabled.status).toBe(200);
    expect(recovered.body.data.recovery.queued).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(hit.body).type).toBe('order.created');
  });

  it("never shows or delivers to another merchant's or stage's endpoints", async () => {
    // Prepare
    const { client } = await setUp();
    const other = await seedOne(merchantFixture());
    const sandbox = await seedOne(merchantFixture(), 'sandbox');
    const inbox = await receiver();
    const endpoint = await createEndpoint(client, inbox.url);

    // Act
    const otherClient = api('live', other.tokens.live);
    const reads = [
      await otherClient.get(`/api/v2/webhooks/${endpoint.uuid}`),
      await otherClient.get(`/api/v2/webhooks/${endpoint.uuid}/deliveries`),
      await otherClient.patch(`/api/v2/webhooks/${endpoint.uuid}`, { enabled: false }),
      await otherClient.delete(`/api/v2/webhooks/${endpoint.uuid}`),
      await otherClient.post(`/api/v2/webhooks/${endpoint.uuid}/test`),
      await api('sandbox', sandbox.tokens.test).get(`/api/v2/webhooks/${endpoint.uuid}`),
    ];
    await otherClient.post('/api/v2/orders/create', orderBody());
    await api('sandbox', sandbox.tokens.test).post('/api/v2/orders/create', orderBody());
    const lists = [
      (await otherClient.get('/api/v2/webhooks')).body.data.webhooks,
      (await client.get('/api/v2/webhooks')).body.data.webhooks,
    ];
    await new Promise((resolve) => setTimeout(resolve, 3000));

    // Assess
    expect(reads.map((response) => response.status)).toEqual([404, 404, 404, 404, 404, 404]);
    expect(lists.map((list: { uuid: string }[]) => list.map((webhook) => webhook.uuid))).toEqual([[], [endpoint.uuid]]);
    expect(inbox.hits).toHaveLength(0);
  });

  it('refuses URLs it cannot deliver to, naming the field, and manages an endpoint through its life', async () => {
    // Prepare
    const { client } = await setUp();

    // Act
    const refused = await Promise.all(
      ['ftp://example.com/x', 'http://example.com/hook', 'http://user:pw@127.0.0.1/x', 'not a url', 'https://shop..example/hook'].map(
        (url) => client.post('/api/v2/webhooks', { url }),
      ),
    );
    const badEvents = await client.post('/api/v2/webhooks', { url: 'https://example.com/hook', events: ['order.deleted'] });
    const ownSecret = await client.post('/api/v2/webhooks', { url: 'https://example.com/hook', secret: 'whsec_mine' });
    const created = await createEndpoint(client, 'https://example.com/hook', ['invite.sent']);
    const before = await client.get(`/api/v2/webhooks/${created.uuid}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const unchanged = await client.patch(`/api/v2/webhooks/${created.uuid}`, {});
    const updated = await client.patch(`/api/v2/webhooks/${created.uuid}`, { description: 'Back office', enabled: false });
    const deleted = await client.delete(`/api/v2/webhooks/${created.uuid}`);
    const gone = await client.get(`/api/v2/webhooks/${created.uuid}`);

    // Assess
    expect(refused.map((response) => [response.status, Object.keys(response.body.errors)])).toEqual(refused.map(() => [422, ['url']]));
    expect([badEvents.status, Object.keys(badEvents.body.errors)[0]]).toEqual([422, 'events.0']);
    expect([ownSecret.status, ownSecret.body.errors]).toEqual([422, { secret: ['The secret field is prohibited.'] }]);
    // A PATCH that names no change changes nothing, its updated_at included.
    expect([unchanged.status, unchanged.body.data.webhook]).toEqual([200, before.body.data.webhook]);
    expect(updated.body.data.webhook).toMatchObject({ description: 'Back office', enabled: false, events: ['invite.sent'] });
    expect(updated.body.data.webhook).not.toHaveProperty('secret');
    expect([deleted.status, deleted.body.data, gone.status]).toEqual([200, null, 404]);
  });

  it('refuses, when written (create and update), URLs a delivery would refuse: control characters, port 0, non-public address literals', async () => {
    // Prepare
    const { client } = await setUp();
    const endpoint = await createEndpoint(client, 'https://example.com/hooks/kept');
    const urls = [
      'https://example.com/hook\r\nX-Injected: 1',
      'https://example.com/ho\tok',
      'https://example.com/hook\u0000',
      'https://example.com:0/hook',
      'https://10.0.0.1/hook',
      'https://100.64.0.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd12::1]/hook',
      'https://[::ffff:169.254.169.254]/latest',
      'https://[64:ff9b::a9fe:a9fe]/latest',
      'https://[64:ff9b:1::a9fe:a9fe]/latest',
      'https://[2002:a9fe:a9fe::]/latest',
    ];

    // Act
    const created = await Promise.all(urls.map((url) => client.post('/api/v2/webhooks', { url })));
    const updated = await Promise.all(urls.map((url) => client.patch(`/api/v2/webhooks/${endpoint.uuid}`, { url })));
    const after = await client.get(`/api/v2/webhooks/${endpoint.uuid}`);
    const list = await client.get('/api/v2/webhooks');

    // Assess
    const refusals = (answers: typeof created) => answers.map((answer) => [answer.status, Object.keys(answer.body.errors ?? {})]);
    expect(refusals(created)).toEqual(urls.map(() => [422, ['url']]));
    expect(refusals(updated)).toEqual(urls.map(() => [422, ['url']]));
    expect(after.body.data.webhook.url).toBe('https://example.com/hooks/kept');
    expect(list.body.data.webhooks.map((webhook: { url: string }) => webhook.url)).toEqual(['https://example.com/hooks/kept']);
  });

  it('pages deliveries with an opaque cursor that ends on the last page, and answers 422 on cursor or per_page for anything else', async () => {
    // Prepare: two deliveries on one endpoint, none on another
    const { client } = await setUp();
    const inbox = await receiver();
    const endpoint = await createEndpoint(client, inbox.url);
    const other = await createEndpoint(client, inbox.url);
    await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    const deliveries = `/api/v2/webhooks/${endpoint.uuid}/deliveries`;
    await eventually(async () => ((await client.get(deliveries)).body.data.deliveries.length === 2 ? true : undefined));

    // Act
    const first = await client.get(`${deliveries}?per_page=1`);
    const cursor = first.body.meta.pagination.next_cursor as string;
    const second = await client.get(`${deliveries}?per_page=1&cursor=${encodeURIComponent(cursor)}`);
    const whole = await client.get(`${deliveries}?per_page=2`);
    const elsewhere = await client.get(`/api/v2/webhooks/${other.uuid}/deliveries?cursor=${encodeURIComponent(cursor)}`);
    const garbage = await Promise.all(
      ['0', 'zzzz', '2026-01-01T00:00:00.000Z#evt_x', `${cursor}x`].map((bad) =>
        client.get(`${deliveries}?cursor=${encodeURIComponent(bad)}`),
      ),
    );
    const perPage = await Promise.all(['0x10', '1e2', '%205', '%2B5', '05'].map((bad) => client.get(`${deliveries}?per_page=${bad}`)));

    // Assess
    expect(second.status).toBe(200);
    expect(second.body.data.deliveries).toHaveLength(1);
    expect(second.body.data.deliveries[0].event_id).not.toBe(first.body.data.deliveries[0].event_id);
    // A last page that is full says so: no cursor to a page with nothing on it.
    expect(second.body.meta.pagination.next_cursor).toBeNull();
    expect([whole.body.data.deliveries.length, whole.body.meta.pagination.next_cursor]).toEqual([2, null]);
    expect([elsewhere.status, elsewhere.body.errors]).toEqual([422, { cursor: ['The selected cursor is invalid.'] }]);
    expect(garbage.map((answer) => [answer.status, answer.body.errors])).toEqual(
      garbage.map(() => [422, { cursor: ['The selected cursor is invalid.'] }]),
    );
    expect(perPage.map((answer) => [answer.status, answer.body.errors])).toEqual(
      perPage.map(() => [422, { per_page: ['The per page field must be an integer.'] }]),
    );
  });

  it('lets an operator list endpoints and deliveries and replay one (npm run admin -- webhooks)', async () => {
    // Prepare
    const { merchant, client } = await setUp();
    const inbox = await receiver();
    const endpoint = await createEndpoint(client, inbox.url);
    const test = await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    const eventId = test.body.data.delivery.event_id;
    await eventually(async () => inbox.hits[0]);
    await eventually(async () =>
      (await client.get(`/api/v2/webhooks/${endpoint.uuid}/deliveries`)).body.data.deliveries[0] ? true : undefined,
    );

    // Act
    const list = await runAdmin('webhooks', 'list', '--merchant', merchant.id);
    const deliveries = await runAdmin('webhooks', 'deliveries', '--merchant', merchant.id, '--endpoint', endpoint.uuid);
    const replay = await runAdmin('webhooks', 'replay', '--merchant', merchant.id, '--endpoint', endpoint.uuid, '--event', eventId);
    await eventually(async () => (inbox.hits.length === 2 ? true : undefined));
    const refused = await runAdmin('webhooks', 'deliveries', '--merchant', merchant.id, '--endpoint', endpoint.uuid, '--limit', 'lots');

    // Assess
    expect(
      list.json.webhooks.map((webhook: { uuid: string; parked_deliveries: number }) => [webhook.uuid, webhook.parked_deliveries]),
    ).toEqual([[endpoint.uuid, 0]]);
    expect(JSON.stringify(list.json)).not.toContain('whsec_');
    expect(deliveries.json.deliveries[0]).toMatchObject({ event_id: eventId, status: 'succeeded' });
    expect(replay.json).toEqual({ stage: 'live', queued: 1, event_id: eventId });
    expect(inbox.hits.map((hit) => hit.headers['webhook-id'])).toEqual([eventId, eventId]);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/--limit must be/)]);
  });

  it('is verified by the 20-line receiver of examples/ (standardwebhooks), unchanged', async () => {
    // Prepare
    const { client } = await setUp();
    const port = 40_000 + Math.floor(Math.random() * 20_000);
    const endpoint = await createEndpoint(client, `http://127.0.0.1:${port}/`);
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/webhook-receiver.ts'], {
      cwd: new URL('../..', import.meta.url).pathname,
      env: { ...process.env, WEBHOOK_SECRET: endpoint.secret, PORT: String(port) },
    });
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });

    try {
      // The receiver is up once it refuses an unsigned post: no delivery fails while it starts.
      await eventually(
        async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).catch(() => undefined))?.status,
        20_000,
      );

      // Act
      await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
      const line = await eventually(async () => (printed.includes('webhook.test') ? printed : undefined));

      // Assess
      expect(line).toMatch(/^evt_test_\S+ webhook\.test \{/);
    } finally {
      child.kill();
    }
  });

  it('shows deliveries to the local webhook inbox, verified with the endpoint secret, and answers ?fail= with that status', async () => {
    // Prepare
    const { client } = await setUp();
    const name = `t-${Date.now()}`;
    const inboxUrl = `${stack.stages.live.url}/webhook-inbox/${name}`;
    const endpoint = await createEndpoint(client, inboxUrl);
    const failing = await createEndpoint(client, `${inboxUrl}-gone?fail=410`);

    // Act
    await client.post(`/api/v2/webhooks/${endpoint.uuid}/test`);
    await client.post(`/api/v2/webhooks/${failing.uuid}/test`);
    const shown = await eventually(async () => {
      const page = (await (await fetch(`${stack.stages.live.url}/webhook-inbox?format=json`)).json()) as {
        deliveries: { path: string; verified: boolean; endpoint_uuid: string; type: string; answered: number }[];
      };
      const mine = page.deliveries.filter((delivery) => delivery.path.includes(name));
      return mine.length === 2 ? mine : undefined;
    });
    const html = await (await fetch(`${stack.stages.live.url}/webhook-inbox`)).text();
    const disabled = await eventually(async () => {
      const read = await client.get(`/api/v2/webhooks/${failing.uuid}`);
      return read.body.data.webhook.enabled === false ? true : undefined;
    });

    // Assess
    const byPath = Object.fromEntries(shown.map((delivery) => [delivery.path, delivery]));
    expect(byPath[`/webhook-inbox/${name}`]).toMatchObject({
      verified: true,
      endpoint_uuid: endpoint.uuid,
      type: 'webhook.test',
      answered: 200,
    });
    expect(byPath[`/webhook-inbox/${name}-gone?fail=410`]).toMatchObject({ verified: true, answered: 410 });
    expect(html).toContain(`/webhook-inbox/${name}`);
    expect(disabled).toBe(true);
  });
});
