import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { orderCreateBody } from '#shared/schemas/order';
import type { SoakMerchant } from '#test/soak/fixtures';
import { WEBHOOK_SCHEDULE } from '#test/soak/options';
import { createModel, createRng, largeOrderBody, oddOrderBody } from '#test/soak/plan';
import { Receiver, WINDOWS } from '#test/soak/receivers';
import { LARGE_TEXT_KINDS, ODD_TEXT_KINDS, refusableRows } from '#test/soak/texts';

/**
 * The soak's inputs are what it claims to be: the odd and the largest texts are orders the API
 * accepts, only the largest of them may be refused as too large to store, and its receivers
 * answer by their behaviour and verify what the service signs.
 */

const merchant = {
  key: 's0',
  domain: 's0.soak.example',
  activeSlugs: ['s0-aff-0'],
  seededOrders: [],
  pendingRequests: new Map(),
  decidedRequests: [],
  seededInvites: [],
} as unknown as SoakMerchant;

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

const post = (receiver: Receiver, secret: string, body: string) => {
  const headers = { 'webhook-id': 'evt_test', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
  const signature = new Webhook(secret).sign(headers['webhook-id'], new Date(), body);
  return fetch(receiver.url, { method: 'POST', body, headers: { ...headers, 'webhook-signature': signature } });
};

describe('soak inputs', () => {
  it('builds the largest orders as valid bodies of 200 rows, and only the 3-byte one is over the size a refusal is allowed for', () => {
    // Prepare
    const model = createModel(merchant);

    // Act
    const bodies = LARGE_TEXT_KINDS.map((kind) => ({ kind, body: largeOrderBody(createRng(1), model, `s0-${kind}`, 100, kind) }));

    // Assess
    const refusable = bodies.filter(({ body }) => refusableRows(body.order_rows)).map(({ kind }) => kind);
    expect(refusable).toEqual(['large-3byte']);
    for (const { kind, body } of bodies) {
      const parsed = orderCreateBody.safeParse(body);
      expect(parsed.success).toBe(kind !== 'large-3byte');
      if (parsed.success) expect(parsed.data.order_rows).toHaveLength(200);
      else expect(parsed.error.issues.map((issue) => issue.path.join('.'))).toEqual(['order_rows']);
    }
  });

  it('builds odd orders whose texts pass the API and its trim unchanged', () => {
    // Prepare
    const model = createModel(merchant);

    // Act
    const bodies = ODD_TEXT_KINDS.map((kind) => oddOrderBody(createRng(2), model, `s0-odd-${kind}`, 100, kind));

    // Assess
    for (const body of bodies) {
      const parsed = orderCreateBody.safeParse(body);
      expect(parsed.success).toBe(true);
      expect(parsed.data?.order_rows.map((row) => row.product_name)).toEqual(body.order_rows.map((row) => row.product_name));
      expect(parsed.data?.customer?.name).toBe(body.customer.name);
    }
  });

  it('keeps every outage of its receivers shorter than the retry schedule it gives the stack', () => {
    // Assess
    const scheduleMs = WEBHOOK_SCHEDULE.reduce((sum, seconds) => sum + seconds, 0) * 1000;
    for (const window of Object.values(WINDOWS)) expect(window.downMs).toBeLessThan(scheduleMs / 4);
  });

  it('answers by behaviour and verifies a delivery signed with the endpoint secret', async () => {
    // Prepare
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const ok = await new Receiver('ok', 'ok').start();
    const gone = await new Receiver('gone', 'gone').start();
    receivers.push(ok, gone);
    ok.secret = secret;
    gone.secret = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';

    // Act
    const answers = [await post(ok, secret, '{"type":"order.created"}'), await post(gone, secret, '{"type":"order.created"}')];

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([200, 410]);
    expect(ok.hits.map((hit) => [hit.answered, hit.verified, hit.type])).toEqual([[200, true, 'order.created']]);
    expect(gone.hits.map((hit) => [hit.answered, hit.verified])).toEqual([[410, false]]);
  });

  it('fails an outage receiver inside its window and answers it outside', () => {
    // Prepare
    const receiver = new Receiver('outage', 'outage');

    // Act
    const down = receiver.isDown(receiver.started + WINDOWS.outage.downMs / 2);
    const up = receiver.isDown(receiver.started + WINDOWS.outage.downMs + 1000);

    // Assess
    expect([down, up]).toEqual([true, false]);
  });
});
