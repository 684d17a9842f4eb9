import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatchWriteCommand, GetCommand, QueryCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { functionTable } from '#shared/db/client';
import { MAX_PREVIOUS_SECRETS, parseWebhookEndpoint, previousSecretsAfterRotation } from '#shared/db/entities/webhook-endpoint';
import type { DeliveryMessage } from '#shared/queue/webhooks';
import { type DeliverSettings, deliver } from '#shared/webhooks/deliver';
import { sealSecret } from '#shared/webhooks/secret-box';
import { conditionFailed, ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT, MERCHANT_PK } from './support/fixtures';

/** The deliverer against mocked DynamoDB and a real receiver on loopback. */
const ENDPOINT = '3f0c2b1a-4d5e-4f60-8a9b-0c1d2e3f4a5b';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = Date.parse('2026-11-25T12:00:00.000Z');

let answer: { status: number; headers?: Record<string, string>; delayMs?: number } = { status: 200 };
const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    received.push({ headers: request.headers, body });
    const { status, headers, delayMs } = answer;
    setTimeout(() => response.writeHead(status, headers ?? {}).end('answer'), delayMs ?? 0);
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

/** A message as sent on the slow lane (its endpoint not known to answer promptly). */
const slowLane = (sent: DeliveryMessage): DeliveryMessage => ({ ...sent, slow: true });

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
const claims = () => updates().filter((input) => String(input.UpdateExpression).startsWith('SET in_flight'));
const finishes = () => updates().filter((input) => String(input.UpdateExpression).includes('ADD in_flight :minus'));

/**
 * The stored endpoint as the fake table keeps it: the claim (an UpdateItem with ALL_NEW) returns
 * it, or is refused with it (ALL_OLD) when `refuseClaim`; a finished failure returns it with `afterFailure`.
 */
let stored: Record<string, unknown> | undefined;
let refuseClaim = false;
let afterFailure: Record<string, unknown> = {};

beforeEach(async () => {
  resetAwsMocks();
  received.length = 0;
  requeued = [];
  answer = { status: 200 };
  stored = await storedEndpoint();
  refuseClaim = false;
  afterFailure = { failing_since: new Date(NOW).toISOString(), consecutive_failures: 1 };
  ddbMock.on(QueryCommand).resolves({ Items: [] });
  ddbMock.on(UpdateCommand).callsFake(updateHandler());
  ddbMock.on(BatchWriteCommand).resolves({});
});

/** The table writes of BatchWriteItem calls: the items put (parks) and the keys deleted. */
const batchWrites = () =>
  ddbMock.commandCalls(BatchWriteCommand).flatMap((call) => call.args[0].input.RequestItems?.[functionTable.table] ?? []);
const parks = () => batchWrites().flatMap((request) => (request.PutRequest ? [request.PutRequest.Item] : []));
const unparked = () => batchWrites().flatMap((request) => (request.DeleteRequest ? [request.DeleteRequest.Key] : []));

/** The fake table's answer to an UpdateItem (see `stored`). */
const updateHandler = () => async (input: UpdateCommandInput) => {
  const expression = String(input.UpdateExpression);
  if (expression.startsWith('SET in_flight')) {
    if (!stored) throw conditionFailed();
    if (refuseClaim) throw conditionFailed(marshall(stored, { removeUndefinedValues: true }));
    return { Attributes: stored };
  }
  if (expression.includes('failing_since = if_not_exists')) return { Attributes: { ...stored, ...afterFailure } };
  if (expression.startsWith('SET fast_at') && stored) {
    const { slow_at: _slowAt, slow_until: _slowUntil, ...rest } = stored;
    stored = { ...rest, fast_at: input.ExpressionAttributeValues?.[':fastAt'], slots: input.ExpressionAttributeValues?.[':slots'] };
    return { Attributes: stored };
  }
  if (expression.startsWith('SET slow_until') && stored) {
    stored = { ...stored, slow_until: input.ExpressionAttributeValues?.[':until'], slow_at: input.ExpressionAttributeValues?.[':now'] };
    return {};
  }
  if (input.ReturnValues === 'UPDATED_OLD') return { Attributes: stored?.waiting === undefined ? {} : { waiting: stored.waiting } };
  return input.ReturnValues === 'ALL_NEW' ? { Attributes: stored } : {};
};

describe('deliver', () => {
  it('claims the endpoint (no read), POSTs the event signed per Standard Webhooks, records the success and gives the claim back', async () => {
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
    expect([claims().length, finishes().length]).toEqual([1, 1]);
    expect(finishes()[0]?.UpdateExpression).toBe('SET fast_at = :fastAt, slots = :slots ADD in_flight :minus REMOVE slow_until, slow_at');
    expect(requeued).toEqual([]);
  });

  it("retries a failure on the schedule, later when the receiver's Retry-After asks, and starts the endpoint's failure streak", async () => {
    // Prepare
    answer = { status: 503, headers: { 'retry-after': '120' } };

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('retrying');
    const retryAt = new Date(NOW + 120_000).toISOString();
    expect(requeued).toEqual([slowLane(message({ attempt: 2, not_before: retryAt }))]);
    expect(deliveryRecord()?.ExpressionAttributeValues).toMatchObject({ ':status': 'pending', ':code': 503, ':next': retryAt });
    expect(finishes()[0]?.ExpressionAttributeValues).toMatchObject({ ':retryAt': retryAt, ':minus': -1 });
  });

  it('counts the wait before the next attempt from the failure, so an attempt that ran into its timeout does not cut the rest short', async () => {
    // Prepare: the attempt starts at NOW and fails 2 s later (the receiver answers 503 at the timeout)
    answer = { status: 503 };
    let calls = 0;
    const clock = (): DeliverSettings => ({ ...settings(), now: () => (calls++ === 0 ? NOW : NOW + 2000) });

    // Act
    const outcome = await deliver(message(), clock());

    // Assess: 5 s after the failure, not after the start
    expect(outcome).toBe('retrying');
    const retryAt = new Date(NOW + 2000 + 5000).toISOString();
    expect(finishes()[0]?.ExpressionAttributeValues).toMatchObject({ ':retryAt': retryAt });
    expect(requeued).toEqual([slowLane(message({ attempt: 2, not_before: retryAt }))]);
  });

  it('gives a delivery up when the schedule is exhausted, without a retry', async () => {
    // Prepare
    answer = { status: 500 };
    afterFailure = { failing_since: new Date(NOW).toISOString(), consecutive_failures: 3 };

    // Act
    const outcome = await deliver(message({ attempt: 3 }), settings());

    // Assess: no retry, only a wake-up at the endpoint's retry time for what is parked by then.
    expect(outcome).toBe('failed');
    expect(requeued).toEqual([
      { ...slowLane(message({ attempt: 3 })), wake: true, not_before: finishes()[0]?.ExpressionAttributeValues?.[':retryAt'] },
    ]);
    expect(deliveryRecord()?.ExpressionAttributeValues).toMatchObject({ ':status': 'failed', ':attempt': 3, ':next': null });
  });

  it('disables the endpoint once its failure streak has lasted 5 days', async () => {
    // Prepare
    answer = { status: 500 };
    afterFailure = { failing_since: new Date(NOW - 5 * 24 * 3600_000).toISOString(), consecutive_failures: 12 };

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('disabled');
    expect(updates().find((input) => input.ExpressionAttributeValues?.[':reason'])?.ExpressionAttributeValues?.[':reason']).toMatch(
      /5 days/,
    );
    expect(requeued).toEqual([]);
  });

  it('keeps an endpoint enabled through many failures in a row within the schedule (deliveries in flight failing at once)', async () => {
    // Prepare
    answer = { status: 503 };
    afterFailure = { failing_since: new Date(NOW - 1000).toISOString(), consecutive_failures: 25 };

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('retrying');
    expect(updates().some((input) => input.ExpressionAttributeValues?.[':reason'])).toBe(false);
  });

  it('counts the deliveries in flight when a streak began as one failure, and each probe after it as one more', async () => {
    // Prepare
    answer = { status: 503 };

    // Act: one claimed before the streak began, one claimed as its probe
    await deliver(message(), settings());
    stored = await storedEndpoint({ failing_since: new Date(NOW - 10_000).toISOString(), consecutive_failures: 1 });
    await deliver(message(), settings());

    // Assess
    expect(finishes().map((input) => input.UpdateExpression)).toEqual([
      expect.stringContaining('consecutive_failures = if_not_exists(consecutive_failures, :one)'),
      expect.stringContaining('ADD in_flight :minus, consecutive_failures :one'),
    ]);
  });

  it("rests a failing endpoint on the schedule by its failures in a row, so a backlog's first attempts do not probe it every few seconds", async () => {
    // Prepare: the endpoint failed twice already; this event's first attempt is the third failure
    answer = { status: 503 };
    stored = await storedEndpoint({ failing_since: new Date(NOW - 10_000).toISOString(), consecutive_failures: 2 });

    // Act
    const outcome = await deliver(message(), settings());

    // Assess: schedule [0, 5, 300]: after a third failure in a row the endpoint rests 300 s (the last wait), not the 5 s of a first retry
    const retryAt = new Date(NOW + 300_000).toISOString();
    expect(outcome).toBe('retrying');
    expect(finishes()[0]?.ExpressionAttributeValues).toMatchObject({ ':retryAt': retryAt });
    expect(requeued).toEqual([slowLane(message({ attempt: 2, not_before: retryAt }))]);
  });

  it("holds the endpoint only for its own next probe when a delivery's next attempt is later, and leaves a wake-up for that probe", async () => {
    // Prepare: the endpoint's first failure in a row, on this event's second attempt
    answer = { status: 503 };

    // Act
    const outcome = await deliver(message({ attempt: 2 }), settings());

    // Assess: schedule [0, 5, 300]: the endpoint rests 5 s (one failure in a row); the event's third attempt comes in 300 s
    const probeAt = new Date(NOW + 5_000).toISOString();
    const retryAt = new Date(NOW + 300_000).toISOString();
    expect(outcome).toBe('retrying');
    expect(finishes()[0]?.ExpressionAttributeValues).toMatchObject({ ':retryAt': probeAt });
    expect(deliveryRecord()?.ExpressionAttributeValues).toMatchObject({ ':status': 'pending', ':next': retryAt });
    expect(requeued).toEqual([
      slowLane(message({ attempt: 3, not_before: retryAt })),
      { ...slowLane(message({ attempt: 2 })), wake: true, not_before: probeAt },
    ]);
  });

  it('takes a claim refused only because its own first try was applied (the answer lost, the SDK retrying) as granted, not as a second slot', async () => {
    // Prepare: the stored endpoint carries this claim's token (attempt 1 of evt_order_v1, at NOW) and the slot it took
    stored = await storedEndpoint({ in_flight: 1, claim_token: `evt_order_v1#1#${NOW}` });
    refuseClaim = true;

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('delivered');
    expect(received).toHaveLength(1);
    expect(claims()[0]?.ConditionExpression).toContain('claim_token <> :token');
  });

  it('gives a slow or never-proven endpoint two slots and a promptly answering one those it earned (at most twenty), in the claim itself', async () => {
    // Act
    await deliver(message(), settings());

    // Assess
    const [claim] = claims();
    expect(claim?.ConditionExpression).toContain(
      'in_flight < :unproven OR (fast_at >= :recent AND in_flight < slots AND in_flight < :slots)',
    );
    expect(claim?.ExpressionAttributeValues).toMatchObject({
      ':unproven': 2,
      ':slots': 20,
      ':recent': new Date(NOW - 10 * 60_000).toISOString(),
    });
  });

  it('disables the endpoint at once when it answers 410 Gone', async () => {
    // Prepare
    answer = { status: 410 };

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('disabled');
    expect(updates().find((input) => input.ExpressionAttributeValues?.[':reason'])?.ExpressionAttributeValues?.[':reason']).toMatch(/410/);
    expect(requeued).toEqual([]);
  });

  it('parks a delivery to a held endpoint (failing or hanging) once, without calling it or sending it round the queue', async () => {
    // Prepare: others are parked already
    const until = new Date(NOW + 60_000).toISOString();
    refuseClaim = true;

    // Act
    stored = await storedEndpoint({ failing_since: '2026-11-25T11:00:00.000Z', retry_at: until, waiting: 3 });
    const behindStreak = await deliver(message({ holds: 3, not_before: new Date(NOW).toISOString() }), settings());
    stored = await storedEndpoint({ slow_until: until, waiting: 4 });
    const behindHang = await deliver(message({ event: { ...message().event, id: 'evt_order_v2' } }), settings());

    // Assess
    expect([behindStreak, behindHang]).toEqual(['parked', 'parked']);
    expect(received).toEqual([]);
    expect(requeued).toEqual([]);
    const at = new Date(NOW).toISOString();
    expect(parks().map((item) => item?.sk)).toEqual([`WHWAIT#${ENDPOINT}#${at}#evt_order_v1`, `WHWAIT#${ENDPOINT}#${at}#evt_order_v2`]);
    expect(JSON.parse(String(parks()[0]?.message))).toEqual(slowLane(message()));
    const noted = updates().filter((input) => String(input.UpdateExpression).startsWith('SET waiting'));
    expect(noted.map((input) => input.ConditionExpression)).toEqual([
      'attribute_exists(pk) AND (enabled = :true AND (retry_at > :now OR slow_until > :now))',
      'attribute_exists(pk) AND (enabled = :true AND (retry_at > :now OR slow_until > :now))',
    ]);
  });

  it('leaves a keeper with the first park of a backlog: a wake-up that waits out every hold and comes back while anything is left parked', async () => {
    // Prepare: nothing parked yet; the endpoint is held for a minute
    const until = new Date(NOW + 60_000).toISOString();
    refuseClaim = true;
    stored = await storedEndpoint({ failing_since: '2026-11-25T11:00:00.000Z', retry_at: until });

    // Act: the first park; then the keeper arrives while a later hold stands, and again once it has passed with more parked than one release takes
    const parked = await deliver(message(), settings());
    const keeper = requeued[0] as DeliveryMessage;
    const later = new Date(NOW + 90_000).toISOString();
    stored = await storedEndpoint({ failing_since: '2026-11-25T11:00:00.000Z', retry_at: later, waiting: 7 });
    ddbMock.on(GetCommand).callsFake(async () => ({ Item: stored }));
    requeued = [];
    const duringHold = await deliver({ ...keeper, not_before: new Date(NOW).toISOString() }, settings());
    const carried = requeued[0] as DeliveryMessage;
    stored = await storedEndpoint({ failing_since: '2026-11-25T11:00:00.000Z', retry_at: new Date(NOW - 1000).toISOString(), waiting: 7 });
    ddbMock.on(QueryCommand).resolves({ Items: [{ pk: MERCHANT_PK, sk: `WHWAIT#${ENDPOINT}#evt_a`, message: JSON.stringify(message()) }] });
    ddbMock.on(BatchWriteCommand).resolves({});
    requeued = [];
    const afterHold = await deliver({ ...carried, not_before: new Date(NOW).toISOString() }, settings());

    // Assess
    expect(parked).toBe('parked');
    expect(keeper).toEqual({ ...slowLane(message()), wake: true, keep: true, not_before: until });
    expect([duringHold, carried.not_before]).toEqual(['waiting', later]);
    expect(afterHold).toBe('waiting');
    expect(requeued).toEqual([slowLane(message()), { ...keeper, not_before: new Date(NOW + settings().timeoutMs).toISOString() }]);
  });

  it('lets the delivery that set the hold, back a moment early, wait for its end instead of parking (it releases the parked ones)', async () => {
    // Prepare: its retry was due at the hold's end, half a second from now.
    const until = new Date(NOW + 500).toISOString();
    stored = await storedEndpoint({ failing_since: '2026-11-25T11:00:00.000Z', retry_at: until });
    refuseClaim = true;

    // Act
    const outcome = await deliver(message({ attempt: 2, not_before: until }), settings());

    // Assess
    expect(outcome).toBe('waiting');
    expect(parks()).toHaveLength(0);
    expect(requeued).toEqual([slowLane(message({ attempt: 2, not_before: until }))]);
  });

  it('takes its park back and comes again in a moment when the hold ended before the park was noted', async () => {
    // Prepare
    stored = await storedEndpoint({ failing_since: '2026-11-25T11:00:00.000Z', retry_at: new Date(NOW + 60_000).toISOString() });
    refuseClaim = true;
    const noteRefused = updateHandler();
    ddbMock.on(UpdateCommand).callsFake(async (input: UpdateCommandInput) => {
      if (String(input.UpdateExpression).startsWith('SET waiting')) throw conditionFailed();
      return noteRefused(input);
    });

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('held');
    const [park] = parks();
    expect(unparked()).toEqual([{ pk: park?.pk, sk: park?.sk }]);
    expect(requeued).toHaveLength(1);
    expect(Date.parse(requeued[0]?.not_before ?? '') - NOW).toBeLessThanOrEqual(1000);
  });

  it('releases the parked deliveries when a delivery ends the hold: sent again due now, removed, and the mark cleared once none is left', async () => {
    // Prepare: the probe is claimed and answered promptly (twenty slots); two deliveries are parked.
    stored = await storedEndpoint({ waiting: 2, fast_at: new Date(NOW - 1000).toISOString(), slots: 20 });
    const parked = [
      message({ event: { ...message().event, id: 'evt_a' } }),
      message({ event: { ...message().event, id: 'evt_b' }, attempt: 3 }),
    ];
    ddbMock.on(QueryCommand).resolves({
      Items: parked.map((held) => ({ pk: MERCHANT_PK, sk: `WHWAIT#${ENDPOINT}#${held.event.id}`, message: JSON.stringify(held) })),
    });
    ddbMock.on(BatchWriteCommand).resolves({});

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('delivered');
    expect(requeued).toEqual(parked);
    const removed = ddbMock.commandCalls(BatchWriteCommand)[0]?.args[0].input.RequestItems?.[functionTable.table];
    expect(removed?.map((request) => request.DeleteRequest?.Key?.sk)).toEqual([`WHWAIT#${ENDPOINT}#evt_a`, `WHWAIT#${ENDPOINT}#evt_b`]);
    const lease = updates().find((input) => String(input.UpdateExpression).startsWith('SET releasing_until'));
    // One release at a time, but the same message, come back after its deliverer died, takes its lease again.
    expect(lease?.ConditionExpression).toContain('attribute_exists(waiting)');
    expect(lease?.ConditionExpression).toContain('releasing_by = :owner');
    expect(lease?.ExpressionAttributeValues?.[':owner']).toBe('evt_order_v1#1');
    const cleared = updates().find((input) => String(input.UpdateExpression).startsWith('REMOVE waiting'));
    expect(cleared?.ExpressionAttributeValues).toEqual({ ':seen': 2 });
  });

  it("releases only as many parked deliveries as the endpoint's free slots, and leaves the mark for the next answer to release more", async () => {
    // Prepare: an endpoint whose prompt answer now earns it four slots, three deliveries still in flight after this one; three parked.
    stored = await storedEndpoint({ waiting: 3, in_flight: 3 });
    const parked = message({ event: { ...message().event, id: 'evt_a' } });
    ddbMock.on(QueryCommand).resolves({ Items: [{ pk: MERCHANT_PK, sk: `WHWAIT#${ENDPOINT}#evt_a`, message: JSON.stringify(parked) }] });
    ddbMock.on(BatchWriteCommand).resolves({});

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('delivered');
    expect(ddbMock.commandCalls(QueryCommand)[0]?.args[0].input.Limit).toBe(1);
    expect(requeued).toEqual([parked]);
    expect(updates().some((input) => String(input.UpdateExpression).startsWith('REMOVE waiting'))).toBe(false);
  });

  it('puts a failed delivery behind the parked ones and leaves a wake-up at the retry time, so the next probe is the one parked longest', async () => {
    // Prepare
    answer = { status: 503 };
    stored = await storedEndpoint({ waiting: 5 });
    afterFailure = { failing_since: new Date(NOW).toISOString(), consecutive_failures: 2, waiting: 5 };

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('retrying');
    const retryAt = finishes()[0]?.ExpressionAttributeValues?.[':retryAt'];
    // Parked without its due time: released, it is due at once.
    expect(JSON.parse(String(parks()[0]?.message))).toEqual(slowLane(message({ attempt: 2 })));
    expect(requeued).toEqual([{ ...slowLane(message()), wake: true, not_before: retryAt }]);
  });

  it('sends again at once what the queue refused of a release, instead of failing the delivery that released it', async () => {
    // Prepare: the queue refuses the second parked delivery once.
    stored = await storedEndpoint({ waiting: 2 });
    const parked = [message({ event: { ...message().event, id: 'evt_a' } }), message({ event: { ...message().event, id: 'evt_b' } })];
    ddbMock.on(QueryCommand).resolves({
      Items: parked.map((held) => ({ pk: MERCHANT_PK, sk: `WHWAIT#${ENDPOINT}#${held.event.id}`, message: JSON.stringify(held) })),
    });
    ddbMock.on(BatchWriteCommand).resolves({});
    const sends: string[][] = [];
    let refused = false;
    const flaky = {
      ...settings(),
      requeue: async (messages: DeliveryMessage[]) => {
        sends.push(messages.map((sent) => sent.event.id));
        return messages.map((sent) => {
          if (sent.event.id !== 'evt_b' || refused) return true;
          refused = true;
          return false;
        });
      },
    };

    // Act
    const outcome = await deliver(message(), flaky);

    // Assess
    expect(outcome).toBe('delivered');
    expect(sends).toEqual([['evt_a', 'evt_b'], ['evt_b']]);
    const removed = ddbMock.commandCalls(BatchWriteCommand)[0]?.args[0].input.RequestItems?.[functionTable.table];
    expect(removed).toHaveLength(2);
  });

  it('releases only one parked delivery (the next probe) when a wake-up finds the endpoint still failing, and none while it is held', async () => {
    // Prepare
    const failing = { failing_since: '2026-11-25T11:00:00.000Z', consecutive_failures: 4, waiting: 7 };
    ddbMock.on(GetCommand).callsFake(async () => ({ Item: stored }));
    const wakeUp = message({ wake: true });

    // Act
    stored = await storedEndpoint({ ...failing, retry_at: new Date(NOW + 60_000).toISOString() });
    const whileHeld = await deliver(wakeUp, settings());
    stored = await storedEndpoint({ ...failing, retry_at: new Date(NOW - 1000).toISOString() });
    const afterHold = await deliver(wakeUp, settings());

    // Assess
    expect([whileHeld, afterHold]).toEqual(['dropped', 'released']);
    expect(received).toEqual([]);
    expect(ddbMock.commandCalls(QueryCommand).map((call) => call.args[0].input.Limit)).toEqual([1]);
    expect(ddbMock.commandCalls(QueryCommand)[0]?.args[0].input.ConsistentRead).toBe(true);
  });

  it("tries again in a moment when all of the endpoint's deliveries are in flight (a slow endpoint), without calling it", async () => {
    // Prepare
    stored = await storedEndpoint({ in_flight: 10, in_flight_at: new Date(NOW - 1000).toISOString() });
    refuseClaim = true;

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('held');
    expect(received).toEqual([]);
    expect(claims()).toHaveLength(1);
    expect(Date.parse(requeued[0]?.not_before ?? '') - NOW).toBeGreaterThanOrEqual(1000);
  });

  it("waits about a delivery timeout when a not-yet-prompt endpoint's few slots are taken, and a second when a prompt one's are", async () => {
    // Prepare: the settings' timeout is 2 s; random 0.5 makes each wait exactly its base.
    const inFlight = { in_flight: 2, in_flight_at: new Date(NOW - 1000).toISOString() };
    const exact = { ...settings(), random: () => 0.5 };
    refuseClaim = true;

    // Act
    stored = await storedEndpoint(inFlight);
    await deliver(message(), exact);
    stored = await storedEndpoint({ ...inFlight, in_flight: 20, fast_at: new Date(NOW - 60_000).toISOString() });
    await deliver(message(), exact);

    // Assess
    expect(requeued.map((held) => Date.parse(held.not_before ?? '') - NOW)).toEqual([2000, 1000]);
  });

  it('resets an in-flight count left by deliverers that died once its latest claim is older than the delivery timeout and 5 s', async () => {
    // Prepare: the timeout is 2 s, so a claim 7 s and a moment old was never ended.
    const claimedAt = new Date(NOW - 7_001).toISOString();
    stored = await storedEndpoint({ in_flight: 1, in_flight_at: claimedAt, failing_since: new Date(NOW - 60_000).toISOString() });
    refuseClaim = true;

    // Act
    await deliver(message(), settings());

    // Assess
    const reset = updates().find((input) => input.UpdateExpression === 'SET in_flight = :value');
    expect(reset?.ExpressionAttributeValues).toEqual({ ':value': 0, ':seen': claimedAt });
  });

  it('leaves an in-flight count whose latest claim may still be running (within the delivery timeout and 5 s)', async () => {
    // Prepare
    stored = await storedEndpoint({ in_flight: 1, in_flight_at: new Date(NOW - 7_000).toISOString() });
    refuseClaim = true;

    // Act
    await deliver(message(), settings());

    // Assess
    expect(updates().some((input) => input.UpdateExpression === 'SET in_flight = :value')).toBe(false);
  });

  it('sets a count taken below one by a release retried after a lost answer right again at its next claim', async () => {
    // Prepare: the claim's +1 leaves the count at 0, so it stood at -1.
    stored = await storedEndpoint({ in_flight: 0, in_flight_at: new Date(NOW).toISOString() });

    // Act
    await deliver(message(), settings());

    // Assess
    const reset = updates().find((input) => input.UpdateExpression === 'SET in_flight = :value');
    expect(reset).toMatchObject({ ConditionExpression: 'in_flight = :seen', ExpressionAttributeValues: { ':value': 1, ':seen': 0 } });
  });

  it('records a delivery to a disabled endpoint as failed without calling it, but lets a test event through', async () => {
    // Prepare
    stored = await storedEndpoint({ enabled: false });
    refuseClaim = true;

    // Act
    const disabled = await deliver(message(), settings());
    const testClaim = async () => {
      refuseClaim = false;
      return deliver(message({ event: { id: 'evt_test_1', type: 'webhook.test', timestamp: 'T', data: {} } }), settings());
    };
    const tested = await testClaim();

    // Assess
    expect([disabled, tested]).toEqual(['failed', 'delivered']);
    expect(claims().map((input) => input.ConditionExpression?.includes('enabled = :true'))).toEqual([true, false]);
    expect(received).toHaveLength(1);
  });

  it('leaves a delivery that succeeded as it is when a copy of its message reaches the endpoint once disabled (recover must not send it again)', async () => {
    // Prepare
    stored = await storedEndpoint({ enabled: false });
    refuseClaim = true;

    // Act
    const outcome = await deliver(message(), settings());

    // Assess: the failed record is written only over no delivery or one that did not succeed
    expect(outcome).toBe('failed');
    expect(deliveryRecord()).toMatchObject({
      ConditionExpression: 'attribute_not_exists(pk) OR #status <> :succeeded',
      ExpressionAttributeValues: expect.objectContaining({ ':status': 'failed', ':succeeded': 'succeeded' }),
    });
  });

  it('lets a test through to a disabled endpoint whatever hold its last failure left, and never parks it there', async () => {
    // Prepare: disabled after a long streak, its last failure's rest a day ahead; a test in flight takes its one slot.
    stored = await storedEndpoint({
      enabled: false,
      failing_since: new Date(NOW - 6 * 86_400_000).toISOString(),
      consecutive_failures: 300,
      retry_at: new Date(NOW + 86_400_000).toISOString(),
      in_flight: 1,
      in_flight_at: new Date(NOW - 1000).toISOString(),
    });
    refuseClaim = true;
    const test = message({ event: { id: 'evt_test_2', type: 'webhook.test', timestamp: 'T', data: {} } });

    // Act
    const outcome = await deliver(test, settings());

    // Assess: the claim ignores a disabled endpoint's holds; refused for its slot, the test waits about a delivery timeout.
    expect(claims()[0]?.ConditionExpression).toContain('(enabled = :false OR ((attribute_not_exists(retry_at) OR retry_at <= :now)');
    expect(outcome).toBe('held');
    expect(parks()).toEqual([]);
    expect(requeued.map((held) => Date.parse(held.not_before ?? '') - NOW)).toEqual([2000]);
  });

  it('doubles the slots of an endpoint with each prompt answer up to twenty, and a failure streak ended by its probe starts again from two', async () => {
    // Act
    stored = await storedEndpoint({ fast_at: new Date(NOW - 60_000).toISOString(), slots: 4 });
    await deliver(message(), settings());
    stored = await storedEndpoint({ fast_at: new Date(NOW - 60_000).toISOString(), slots: 16 });
    await deliver(message(), settings());
    stored = await storedEndpoint({ failing_since: new Date(NOW - 60_000).toISOString(), consecutive_failures: 3, slots: 16 });
    await deliver(message(), settings());

    // Assess
    expect(finishes().map((input) => input.ExpressionAttributeValues?.[':slots'])).toEqual([8, 20, 2]);
  });

  it('takes the earned slots away from an endpoint that answers slowly or fails, so it proves itself again from two', async () => {
    // Prepare: it answered promptly a minute ago and earned twenty slots.
    stored = await storedEndpoint({ fast_at: new Date(NOW - 60_000).toISOString(), slots: 20 });

    // Act: a 2xx after the 1 s that counts as slow here, then a 503.
    answer = { status: 200, delayMs: 1100 };
    await deliver(message(), settings());
    answer = { status: 503 };
    await deliver(message(), settings());

    // Assess
    const [slow, failed] = finishes();
    expect(slow?.UpdateExpression).toBe('ADD in_flight :minus REMOVE slow_until, fast_at, slots');
    expect(failed?.UpdateExpression).toContain('REMOVE slow_until, fast_at, slots');
  });

  it('sends a message that is not yet due on again unchanged, and drops one whose endpoint is gone or no longer subscribes', async () => {
    // Prepare
    const later = message({ not_before: new Date(NOW + 3600_000).toISOString() });

    // Act
    const waiting = await deliver(later, settings());
    stored = await storedEndpoint({ events: ['invite.sent'] });
    const unsubscribed = await deliver(message(), settings());
    stored = undefined;
    const gone = await deliver(message(), settings());

    // Assess
    expect([waiting, unsubscribed, gone]).toEqual(['waiting', 'dropped', 'dropped']);
    expect(requeued).toEqual([later]);
    expect(received).toEqual([]);
    expect(finishes()).toHaveLength(1);
  });

  it('signs with the previous secret beside the new one until the overlap ends, then with the new one only', async () => {
    // Prepare
    const OLD = 'whsec_T2xkIHNlY3JldCBvZiB0aGUgZW5kcG9pbnQhIQ==';
    const rotated = async (until: number) =>
      storedEndpoint({
        previous_secret_box: await sealSecret(OLD, MERCHANT.id, ENDPOINT),
        previous_secret_expires_at: new Date(until).toISOString(),
      });
    stored = await rotated(NOW + 3600_000);

    // Act
    await deliver(message(), settings());
    stored = await rotated(NOW - 1);
    await deliver(message(), settings());

    // Assess
    const [during, after] = received.map((hit) => String(hit.headers['webhook-signature']).split(' '));
    const signature = (secret: string, index: number) =>
      new Webhook(secret).sign('evt_order_v1', new Date(NOW), received[index]?.body ?? '');
    expect(during).toEqual([signature(SECRET, 0), signature(OLD, 0)]);
    expect(after).toEqual([signature(SECRET, 1)]);
  });

  it('signs with every secret replaced within the last 24 h after quick rotations, and with the newest only once they expire', async () => {
    // Prepare: rotated twice a minute apart (first -> second -> third), each replaced secret kept for 24 h
    const [first, second, third] = [
      'whsec_Rmlyc3Qgc2VjcmV0IG9mIHRoZSBlbmRwb2ludCE=',
      'whsec_U2Vjb25kIHNlY3JldCBvZiB0aGUgZW5kcG9pbnQh',
      SECRET,
    ];
    const day = 24 * 3600_000;
    const rotate = async (endpoint: Record<string, unknown>, secret: string, at: number) => ({
      ...endpoint,
      secret_box: await sealSecret(secret, MERCHANT.id, ENDPOINT),
      previous_secrets: previousSecretsAfterRotation(parseWebhookEndpoint(endpoint), new Date(at + day).toISOString(), at),
    });
    const original = await storedEndpoint({ secret_box: await sealSecret(first, MERCHANT.id, ENDPOINT) });
    stored = await rotate(await rotate(original, second, NOW - 120_000), third, NOW - 60_000);
    const at = (ms: number): DeliverSettings => ({ ...settings(), now: () => ms });

    // Act
    await deliver(message(), at(NOW));
    await deliver(message(), at(NOW - 60_000 + day + 1));

    // Assess
    const [during, after] = received.map((hit) => String(hit.headers['webhook-signature']).split(' '));
    const signature = (secret: string, index: number, ms: number) =>
      new Webhook(secret).sign('evt_order_v1', new Date(ms), received[index]?.body ?? '');
    expect(during).toEqual([signature(third, 0, NOW), signature(second, 0, NOW), signature(first, 0, NOW)]);
    expect(after).toEqual([signature(third, 1, NOW - 60_000 + day + 1)]);
  });

  it('keeps at most MAX_PREVIOUS_SECRETS replaced secrets, dropping the oldest, however often it is rotated in a day', async () => {
    // Prepare
    let endpoint = parseWebhookEndpoint(await storedEndpoint({ secret_box: 'box-0' }));

    // Act
    for (let rotation = 1; rotation <= MAX_PREVIOUS_SECRETS + 3; rotation++) {
      const at = NOW + rotation * 1000;
      endpoint = {
        ...endpoint,
        secret_box: `box-${rotation}`,
        previous_secrets: previousSecretsAfterRotation(endpoint, new Date(at + 24 * 3600_000).toISOString(), at),
      };
    }

    // Assess
    expect(endpoint.previous_secrets?.map((previous) => previous.box)).toEqual(
      Array.from({ length: MAX_PREVIOUS_SECRETS }, (_, index) => `box-${MAX_PREVIOUS_SECRETS + 2 - index}`),
    );
  });

  it('sends the retry of a delivery that went unanswered for a moment on the slow lane', async () => {
    // Prepare: a 500 after 1.2 s, with a 2 s timeout (slow after 1 s)
    answer = { status: 500, delayMs: 1200 };

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('retrying');
    expect(requeued.map((sent) => [sent.attempt, sent.slow ?? false])).toEqual([[2, true]]);
  });

  it('moves a slow-lane message back to the lane of endpoints that answer once its endpoint answered promptly, and a message of a slow endpoint to the slow lane', async () => {
    // Prepare: every slot in flight; first an endpoint that answers promptly, then one that went unanswered
    refuseClaim = true;
    stored = await storedEndpoint({ in_flight: 2, fast_at: new Date(NOW - 1000).toISOString(), slots: 2 });

    // Act
    await deliver(message({ slow: true }), settings());
    stored = await storedEndpoint({ in_flight: 2, slow_at: new Date(NOW - 60_000).toISOString() });
    await deliver(message(), settings());

    // Assess: each waits, on its endpoint's lane
    expect(requeued.map((sent) => [sent.holds, sent.slow ?? false])).toEqual([
      [1, false],
      [1, true],
    ]);
  });

  it('marks the endpoint slow while a delivery goes unanswered, so its other deliveries wait instead of piling up', async () => {
    // Prepare: answered after 1.2 s, with a 2 s timeout (slow after 1 s)
    answer = { status: 200, delayMs: 1200 };

    // Act
    const outcome = await deliver(message(), settings());

    // Assess
    expect(outcome).toBe('delivered');
    const slow = updates().find((input) => input.UpdateExpression?.includes('slow_until = :until'));
    expect(slow?.ExpressionAttributeValues?.[':until']).toBe(new Date(NOW + 2000).toISOString());
    expect(finishes()[0]?.UpdateExpression).toContain('REMOVE slow_until');
  });
});
