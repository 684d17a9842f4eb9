import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand, QueryCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { functionTable } from '#shared/db/client';
import type { DeliveryMessage } from '#shared/queue/webhooks';
import { type DeliverSettings, deliver } from '#shared/webhooks/deliver';
import { sealSecret } from '#shared/webhooks/secret-box';
import { ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT, MERCHANT_PK } from './support/fixtures';

/** The deliverer against mocked DynamoDB and a real receiver on loopback. */
const ENDPOINT = '3f0c2b1a-4d5e-4f60-8a9b-0c1d2e3f4a5b';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = Date.parse('2026-11-25T12:00:00.000Z');

let answer: { status: number; headers?: Record<string, string> } = { status: 200 };
const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    received.push({ headers: request.headers, body });
    response.writeHead(answer.status, answer.headers ?? {}).end('answer');
  });
});
let url = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const storedEndpoint = async (overrides: Record<string, unknown> = {}) => ({
  pk: MERCHANT_PK,
  sk: `WEBHOOK#${ENDPOINT}`,
  type: 'webhook_endpoint',
  uuid: ENDPOINT,
  url,
  description: null,
  events: [],
  enabled: true,
  disabled_reason: null,
  secret_box: await sealSecret(SECRET, MERCHANT.id, ENDPOINT),
  created_at: '2026-11-01T00:00:00.000Z',
  updated_at: '2026-11-01T00:00:00.000Z',
  ...overrides,
});

const message = (overrides: Partial<DeliveryMessage> = {}): DeliveryMessage => ({
  merchant_id: MERCHANT.id,
  endpoint_uuid: ENDPOINT,
  event: { id: 'evt_order_v1', type: 'order.created', timestamp: '2026-11-25T11:59:59.000Z', data: { order: { uuid: 'o1' } } },
  attempt: 1,
  ...overrides,
});

let requeued: DeliveryMessage[] = [];
const settings = (): DeliverSettings => ({
  db: functionTable,
  policy: { allowLocal: true },
  timeoutMs: 2000,
  schedule: [0, 5, 300],
  requeue: async (messages) => {
    requeued.push(...messages);
    return messages.map(() => true);
  },
  now: () => NOW,
  random: () => 0.5,
});

/** The UpdateItems sent, by what they set. */
const updates = () => ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input as UpdateCommandInput);
const deliveryRecord = () => updates().find((input) => String(input.Key?.sk).startsWith('WHDELIVERY#'));

beforeEach(async () => {
  resetAwsMocks();
  received.length = 0;
  requeued = [];
  answer = { status: 200 };
  ddbMock.on(GetCommand).resolves({ Item: await storedEndpoint() });
  ddbMock.on(QueryCommand).resolves({ Items: [] });
  ddbMock.on(UpdateCommand).resolves({});
});

describe('deliver', () => {
  it('POSTs the event signed per Standard Webhooks, records the success and gives its slot back', async () => {
    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('delivered');
    const [hit] = received;
    // Signed at the deliverer's clock (NOW): what standardwebhooks computes for that id, time and body.
    expect(hit?.headers['webhook-signature']).toBe(new Webhook(SECRET).sign('evt_order_v1', new Date(NOW), hit?.body ?? ''));
    expect(hit?.headers['webhook-timestamp']).toBe(String(NOW / 1000));
    expect(JSON.parse(hit?.body ?? '')).toEqual({
      type: 'order.created',
      timestamp: '2026-11-25T11:59:59.000Z',
      data: { order: { uuid: 'o1' } },
    });
    expect(hit?.headers['webhook-id']).toBe('evt_order_v1');
    expect(deliveryRecord()?.ExpressionAttributeValues).toMatchObject({
      ':status': 'succeeded',
      ':code': 200,
      ':attempt': 1,
      ':next': null,
    });
    const slots = updates().filter((input) => input.ExpressionAttributeNames?.['#slot']);
    expect(slots.map((input) => input.UpdateExpression?.split(' ')[0])).toEqual(['SET', 'REMOVE']);
    expect(requeued).toEqual([]);
  });

  it("retries a failure on the schedule, later when the receiver's Retry-After asks, and starts the endpoint's failure streak", async () => {
    // Prepare
    answer = { status: 503, headers: { 'retry-after': '120' } };
    ddbMock
      .on(UpdateCommand)
      .callsFake(async (input: UpdateCommandInput) =>
        String(input.UpdateExpression).includes('consecutive_failures')
          ? { Attributes: await storedEndpoint({ failing_since: new Date(NOW).toISOString(), consecutive_failures: 1 }) }
          : {},
      );

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('retrying');
    const retryAt = new Date(NOW + 120_000).toISOString();
    expect(requeued).toEqual([message({ attempt: 2, not_before: retryAt })]);
    expect(deliveryRecord()?.ExpressionAttributeValues).toMatchObject({ ':status': 'pending', ':code': 503, ':next': retryAt });
    expect(updates().some((input) => input.ExpressionAttributeValues?.[':retryAt'] === retryAt)).toBe(true);
  });

  it('gives a delivery up when the schedule is exhausted, without a retry', async () => {
    // Prepare
    answer = { status: 500 };
    ddbMock
      .on(UpdateCommand)
      .callsFake(async (input: UpdateCommandInput) =>
        String(input.UpdateExpression).includes('consecutive_failures')
          ? { Attributes: await storedEndpoint({ failing_since: new Date(NOW).toISOString(), consecutive_failures: 3 }) }
          : {},
      );

    // Act
    const outcome = await deliver(message({ attempt: 3 }), settings());

    // Assess
    expect(outcome).toBe('failed');
    expect(requeued).toEqual([]);
    expect(deliveryRecord()?.ExpressionAttributeValues).toMatchObject({ ':status': 'failed', ':attempt': 3, ':next': null });
  });

  it('disables the endpoint on the 20th failure in a row', async () => {
    // Prepare
    answer = { status: 500 };
    ddbMock
      .on(UpdateCommand)
      .callsFake(async (input: UpdateCommandInput) =>
        String(input.UpdateExpression).includes('consecutive_failures')
          ? { Attributes: await storedEndpoint({ failing_since: new Date(NOW - 3600_000).toISOString(), consecutive_failures: 20 }) }
          : {},
      );

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('disabled');
    expect(updates().find((input) => input.ExpressionAttributeValues?.[':reason'])?.ExpressionAttributeValues?.[':reason']).toMatch(
      /20 attempts/,
    );
    expect(requeued).toEqual([]);
  });

  it('holds a delivery to a failing endpoint until its retry time, without calling it', async () => {
    // Prepare
    const retryAt = new Date(NOW + 60_000).toISOString();
    ddbMock.on(GetCommand).resolves({ Item: await storedEndpoint({ failing_since: '2026-11-25T11:00:00.000Z', retry_at: retryAt }) });

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('held');
    expect(received).toEqual([]);
    expect(requeued[0]?.attempt).toBe(1);
    expect(Date.parse(requeued[0]?.not_before ?? '')).toBeGreaterThan(Date.parse(retryAt));
  });

  it('waits a moment when every delivery slot of the endpoint is held (a slow endpoint), without calling it', async () => {
    // Prepare
    const held = new Date(NOW + 10_000).toISOString();
    ddbMock.on(GetCommand).resolves({ Item: await storedEndpoint({ slot_0: held, slot_1: held, slot_2: held, slot_3: held }) });

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('held');
    expect(received).toEqual([]);
    expect(updates()).toEqual([]);
    expect(Date.parse(requeued[0]?.not_before ?? '') - NOW).toBeGreaterThanOrEqual(1000);
  });

  it('sends a message that is not yet due on again unchanged, and drops one whose endpoint is gone or no longer subscribes', async () => {
    // Prepare
    const later = message({ not_before: new Date(NOW + 3600_000).toISOString() });

    // Act
    const waiting = await deliver(later, settings());
    ddbMock.on(GetCommand).resolves({ Item: await storedEndpoint({ events: ['invite.sent'] }) });
    const unsubscribed = await deliver(message(), settings());
    ddbMock.on(GetCommand).resolves({});
    const gone = await deliver(message(), settings());

    // Assess
    expect([waiting, unsubscribed, gone]).toEqual(['waiting', 'dropped', 'dropped']);
    expect(requeued).toEqual([later]);
    expect(received).toEqual([]);
  });
});
