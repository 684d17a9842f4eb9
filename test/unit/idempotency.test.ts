import { GetCommand, PutCommand, type PutCommandInput, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as cancelOrder } from '#functions/orders/cancel';
import { handler as createV2 } from '#functions/orders/create';
import { handler as createLegacy } from '#functions/orders/create-legacy';
import { handler as getOrder } from '#functions/orders/get';
import { handler as updateOrder } from '#functions/orders/update';
import { handler as createWebhook } from '#functions/webhooks/create';
import { requestFingerprint } from '#shared/http/request-fingerprint';
import { logger } from '#shared/logger';
import { requestIdentity } from '#shared/request-identity';
import { apiEvent, type EventOptions, expectV2Error, invoke } from './support/api';
import { conditionFailed, ddbMock, provisionedThroughputExceeded, resetAwsMocks, sqsMock, transactionConflict } from './support/aws';
import {
  derivedOrderUuid,
  MERCHANT,
  MERCHANT_PK,
  ORDER_PUT,
  ORDER_SEQUENCE_KEY,
  ORDER_UUID,
  orderBody,
  orderPuts,
  storedOrder,
  stubAuth,
  stubOrderCreate,
  stubOrderSequence,
  TOKENS,
  TRACE_ID,
} from './support/fixtures';

const KEY = 'b1f8c2e4-7d3a-4f5e-9c1b-0a2d4e6f8a0c';
const RECORD_KEY = { pk: MERCHANT_PK, sk: `IDEMPOTENCY#${KEY}` };
const DAY = 24 * 60 * 60;
/** Matches the PutItem that claims a key (the order's own put is stubbed apart: support/fixtures ORDER_PUT). */
const CLAIM = { Item: { type: 'idempotency' } };

const createEvent = (options: EventOptions = {}) =>
  apiEvent('orders-create', { token: TOKENS.live, body: orderBody(), ...options, headers: { 'Idempotency-Key': KEY, ...options.headers } });
const legacyEvent = (options: EventOptions = {}) =>
  apiEvent('orders-create-legacy', {
    token: TOKENS.live,
    body: orderBody(),
    ...options,
    headers: { 'Idempotency-Key': KEY, ...options.headers },
  });

const cancelEvent = (uuid: string) =>
  apiEvent('orders-cancel', { token: TOKENS.live, pathParameters: { uuid }, headers: { 'Idempotency-Key': KEY } });

const idempotencyPuts = () =>
  ddbMock.commandCalls(PutCommand).filter((call) => String(call.args[0].input.Item?.sk).startsWith('IDEMPOTENCY#'));
const idempotencyUpdates = () =>
  ddbMock
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input as UpdateCommandInput)
    .filter((input) => String(input.Key?.sk).startsWith('IDEMPOTENCY#'));

/** A record as DynamoDB hands it back on a failed condition (AttributeValue form). */
const completedRecord = (
  event: APIGatewayProxyEvent,
  response: { status: number; body: string },
  overrides: Record<string, unknown> = {},
) =>
  marshall({
    ...RECORD_KEY,
    type: 'idempotency',
    status: 'completed',
    fingerprint: requestFingerprint(event),
    claim_id: 'c-1',
    response_status: response.status,
    response_headers: { 'content-type': 'application/json' },
    response_body: response.body,
    expires_at: Math.floor(Date.now() / 1000) + DAY - 60,
    ...overrides,
  });

const inProgressRecord = (event: APIGatewayProxyEvent, overrides: Record<string, unknown> = {}) =>
  marshall({
    ...RECORD_KEY,
    type: 'idempotency',
    status: 'in_progress',
    fingerprint: requestFingerprint(event),
    claim_id: 'c-1',
    in_flight_until: Date.now() + 20_000,
    expires_at: Math.floor(Date.now() / 1000) + DAY,
    ...overrides,
  });

const STORED_V2_BODY =
  '{"success":true,"data":{"order":{"uuid":"3e0b6d2c-5a1f-4c8e-9b7d-2f4a6c8e0b1d","order_no":"A-1001"}},"errors":null,"meta":{"trace_id":"2026-03-01T10:00:00Z:api:0badc0de"}}';

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
  stubOrderCreate();
  ddbMock.on(UpdateCommand).resolves({ Attributes: storedOrder() });
  stubOrderSequence();
  ddbMock.on(PutCommand, CLAIM).resolves({});
  ddbMock.on(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${ORDER_UUID}` } }).resolves({ Item: storedOrder() });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('without an Idempotency-Key header', () => {
  it('writes no idempotency record and answers exactly as before', async () => {
    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.headers).toEqual({ 'content-type': 'application/json' });
    expect(idempotencyPuts()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
    expect(orderPuts()).toHaveLength(1);
  });
});

describe('the first request with a key', () => {
  it("numbers the order beside the key's claim, not after it", async () => {
    // Prepare: the claim held back until the order sequence's ADD is out
    let claimAnswer = () => {};
    const claimHeld = new Promise<void>((resolve) => {
      claimAnswer = resolve;
    });
    ddbMock.on(PutCommand, CLAIM).callsFake(async () => {
      await claimHeld;
      return {};
    });

    // Act
    const answer = invoke(createV2, createEvent());
    await vi.waitFor(() => expect(ddbMock.commandCalls(UpdateCommand, { Key: ORDER_SEQUENCE_KEY })).toHaveLength(1));
    const ordersPutBeforeClaim = orderPuts().length;
    claimAnswer();
    const response = await answer;

    // Assess
    expect(ordersPutBeforeClaim).toBe(0);
    expect(response.statusCode).toBe(201);
    expect(orderPuts()).toHaveLength(1);
  });

  it('claims the key under the merchant partition: in progress, 24 hours to live, an in-flight lease past the invocation', async () => {
    // Prepare
    const before = Date.now();

    // Act
    const response = await invoke(createV2, createEvent());

    // Assess
    expect(response.statusCode).toBe(201);
    const [put] = idempotencyPuts();
    const input = put!.args[0].input;
    expect(input.Item).toMatchObject({ ...RECORD_KEY, status: 'in_progress', fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(input.Item!.expires_at).toBeGreaterThanOrEqual(Math.floor(before / 1000) + DAY);
    expect(input.Item!.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + DAY);
    // The local context gives the invocation the routes' 10 s; the lease adds a margin on top of what is left.
    expect(input.Item!.in_flight_until).toBeGreaterThan(before + 10_000);
    expect(input.Item!.in_flight_until).toBeLessThanOrEqual(Date.now() + 10_000 + 10_000);
    expect(input.ConditionExpression).toBe('attribute_not_exists(pk) OR #expires <= :nowSeconds');
  });

  it('stores the final response byte for byte (status, headers, body), conditional on its own claim', async () => {
    // Act
    const response = await invoke(cancelOrder, cancelEvent(ORDER_UUID));

    // Assess
    expect(response.statusCode).toBe(200);
    const claimId = idempotencyPuts()[0]!.args[0].input.Item!.claim_id;
    const [update] = idempotencyUpdates();
    expect(update!.Key).toEqual(RECORD_KEY);
    expect(update!.ConditionExpression).toBe('claim_id = :claimId AND #status = :inProgress');
    expect(update!.ExpressionAttributeValues).toMatchObject({
      ':claimId': claimId,
      ':completed': 'completed',
      ':statusCode': 200,
      ':headers': { 'content-type': 'application/json' },
      ':body': response.raw,
    });
    expect(response.headers).not.toHaveProperty('idempotent-replayed');
  });

  it("stores no record for a create's 201: its claim keeps the request's trace id, and the order answers a retry", async () => {
    // Act
    const response = await invoke(createV2, createEvent());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(idempotencyPuts()[0]!.args[0].input.Item).toMatchObject({ status: 'in_progress', trace_id: response.body.meta.trace_id });
    expect(idempotencyUpdates()).toHaveLength(0);
  });

  it('accepts the header in any casing and a key of exactly 255 characters', async () => {
    // Prepare
    const key = 'k'.repeat(255);

    // Act
    const response = await invoke(
      createV2,
      apiEvent('orders-create', { token: TOKENS.live, body: orderBody(), headers: { 'idempotency-key': key } }),
    );

    // Assess
    expect(response.statusCode).toBe(201);
    expect(idempotencyPuts()[0]!.args[0].input.Item).toMatchObject({ pk: MERCHANT_PK, sk: `IDEMPOTENCY#${key}` });
  });

  it('stores nothing for a body that fails validation: no claim, no record, so the corrected request with the key runs', async () => {
    // Act
    const refused = await invoke(createV2, createEvent({ body: {} }));

    // Assess
    expect(refused.statusCode).toBe(422);
    expect(idempotencyPuts()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
    expect(orderPuts()).toHaveLength(0);
    const corrected = await invoke(createV2, createEvent());
    expect(corrected.statusCode).toBe(201);
    expect(idempotencyPuts()).toHaveLength(1);
  });

  it('stores nothing for malformed JSON', async () => {
    // Act
    const response = await invoke(createV2, createEvent({ rawBody: '{"order_no":' }));

    // Assess
    expectV2Error(response, 422, { message: ['The request body must be valid JSON.'] });
    expect(idempotencyPuts()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
  });

  it('stores a 4xx of the handler (a business rule): a retry gets the same answer', async () => {
    // Prepare: the order_no is another order's
    ddbMock
      .on(GetCommand, { Key: { pk: MERCHANT_PK, sk: 'ORDER_NO#A-1001' } })
      .resolves({ Item: { order_uuid: '0b1c2d3e-4f50-4617-8283-94a5b6c7d8e9' } });

    // Act
    const response = await invoke(createV2, createEvent());

    // Assess
    expectV2Error(response, 422, { order_no: ['The order no has already been taken.'] });
    expect(idempotencyUpdates()[0]!.ExpressionAttributeValues).toMatchObject({ ':statusCode': 422, ':body': response.raw });
  });

  it('never stores a 5xx: the handler fails, the answer is 500, and the key is released for a retry', async () => {
    // Prepare
    ddbMock.on(PutCommand, ORDER_PUT).rejects(new Error('DynamoDB is having a bad day'));

    // Act
    const response = await invoke(createV2, createEvent());

    // Assess
    expectV2Error(response, 500, { message: ['Server Error'] });
    const claimId = idempotencyPuts()[0]!.args[0].input.Item!.claim_id;
    const updates = idempotencyUpdates();
    expect(updates).toHaveLength(1);
    expect(updates[0]!.UpdateExpression).toBe('SET in_flight_until = :released');
    expect(updates[0]!.ExpressionAttributeValues).toEqual({ ':claimId': claimId, ':inProgress': 'in_progress', ':released': 0 });
    expect(updates[0]!.ExpressionAttributeValues).not.toHaveProperty(':body');
  });

  it.each([
    ['throttled', provisionedThroughputExceeded],
    ['in conflict with a transaction', transactionConflict],
  ])('stores the response although its first completion was %s (retried), so a retry is replayed, not run again', async (_, failure) => {
    // Prepare
    ddbMock.on(UpdateCommand, { Key: RECORD_KEY }).rejectsOnce(failure()).resolves({});

    // Act
    const response = await invoke(cancelOrder, cancelEvent(ORDER_UUID));

    // Assess
    expect(response.statusCode).toBe(200);
    const completions = idempotencyUpdates().filter((update) => update.ExpressionAttributeValues?.[':completed'] === 'completed');
    expect(completions).toHaveLength(2);
    expect(completions[1]?.ExpressionAttributeValues).toMatchObject({ ':statusCode': 200, ':body': response.raw });
  });

  it('still answers when the response cannot be stored, and logs why', async () => {
    // Prepare
    const failure = new Error('throttled');
    ddbMock.on(UpdateCommand, { Key: RECORD_KEY }).rejects(failure);
    const logged = vi.spyOn(logger, 'error');

    // Act
    const response = await invoke(cancelOrder, cancelEvent(ORDER_UUID));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(logged).toHaveBeenCalledWith('Could not record the idempotent response', failure);
  });

  it('still answers when its claim was taken over meanwhile (its lease ran out), without overwriting the new record', async () => {
    // Prepare
    ddbMock.on(UpdateCommand, { Key: RECORD_KEY }).rejects(conditionFailed());
    const warned = vi.spyOn(logger, 'warn');

    // Act
    const response = await invoke(cancelOrder, cancelEvent(ORDER_UUID));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(warned).toHaveBeenCalledWith('Idempotency claim lost before the response was stored', { key: KEY });
  });
});

describe('an answer that shows a secret (webhook create)', () => {
  const webhookEvent = () =>
    apiEvent('webhooks-create', {
      token: TOKENS.live,
      body: { url: 'https://merchant.example/hooks' },
      headers: { 'Idempotency-Key': KEY },
    });

  it('stores the secret sealed and lists where it is, and a replay shows the first answer byte for byte', async () => {
    // Prepare
    const event = webhookEvent();

    // Act
    const first = await invoke(createWebhook, event);
    const values = idempotencyUpdates()[0]!.ExpressionAttributeValues!;
    ddbMock
      .on(PutCommand)
      .rejects(
        conditionFailed(completedRecord(event, { status: 201, body: values[':body'] as string }, { response_sealed: values[':sealed'] })),
      );
    const replay = await invoke(createWebhook, event);

    // Assess
    expect(first.statusCode).toBe(201);
    expect(first.raw).toContain('"secret":"whsec_');
    expect(values[':body']).not.toContain('whsec_');
    expect(values[':sealed']).toEqual([['data', 'webhook', 'secret']]);
    expect(JSON.parse(values[':body'] as string).data.webhook.secret).toMatch(/^v1\./);
    expect(replay.raw).toBe(first.raw);
    expect(replay.headers).toMatchObject({ 'idempotent-replayed': 'true' });
  });

  it('seals the secret for this merchant and key only: moved to another key, it does not open', async () => {
    // Prepare
    const event = webhookEvent();
    await invoke(createWebhook, event);
    const values = idempotencyUpdates()[0]!.ExpressionAttributeValues!;
    const moved = apiEvent('webhooks-create', {
      token: TOKENS.live,
      body: { url: 'https://merchant.example/hooks' },
      headers: { 'Idempotency-Key': 'another-key' },
    });
    ddbMock
      .on(PutCommand)
      .rejects(
        conditionFailed(completedRecord(moved, { status: 201, body: values[':body'] as string }, { response_sealed: values[':sealed'] })),
      );
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => undefined);

    // Act
    const replay = await invoke(createWebhook, moved);

    // Assess
    expect(replay.statusCode).toBe(500);
    expect(String(logged.mock.calls[0]?.[1])).toMatch(/unable to authenticate data/);
    expect(replay.raw).not.toContain('whsec_');
  });
});

/** A cancel with the key, its path uuid as given; and an answer stored for it. */
const CANCEL_BODY = JSON.stringify({ success: true, data: { order: { uuid: ORDER_UUID } }, errors: null, meta: {} });

describe('a retry with the same key', () => {
  it('gets the stored response byte for byte with Idempotent-Replayed: true, and the handler does not run', async () => {
    // Prepare
    const event = createEvent();
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(completedRecord(event, { status: 201, body: STORED_V2_BODY })));

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.raw).toBe(STORED_V2_BODY);
    expect(response.headers).toEqual({ 'content-type': 'application/json', 'idempotent-replayed': 'true' });
    expect(orderPuts()).toHaveLength(0);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
    expect(idempotencyUpdates()).toHaveLength(0);
  });

  it('is the same request when it spells the path uuid in capitals: it gets the stored response, not 422', async () => {
    // Prepare: the cancel was stored for the lowercase uuid
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(completedRecord(cancelEvent(ORDER_UUID), { status: 200, body: CANCEL_BODY })));

    // Act
    const response = await invoke(cancelOrder, cancelEvent(ORDER_UUID.toUpperCase()));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.raw).toBe(CANCEL_BODY);
    expect(response.headers?.['idempotent-replayed']).toBe('true');
  });

  it('replays a record stored with the path as sent (capitals), as the fingerprint was before it took the path as validated', async () => {
    // Prepare
    const upper = cancelEvent(ORDER_UUID.toUpperCase());
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(completedRecord(upper, { status: 200, body: CANCEL_BODY })));

    // Act
    const response = await invoke(cancelOrder, upper);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.raw).toBe(CANCEL_BODY);
  });

  it('replays a stored 4xx with its status', async () => {
    // Prepare
    const event = createEvent();
    const stored =
      '{"success":false,"data":null,"errors":{"order_no":["The order no has already been taken."]},"meta":{"trace_id":"2026-03-01T10:00:00Z:api:0badc0de"}}';
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(completedRecord(event, { status: 422, body: stored })));

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.raw).toBe(stored);
    expect(response.headers).toMatchObject({ 'idempotent-replayed': 'true' });
  });

  it('replays on the legacy route in its own envelope (what was stored)', async () => {
    // Prepare
    const event = legacyEvent();
    const stored = '{"success":true,"message":"Order created.","data":{"uuid":"3e0b6d2c-5a1f-4c8e-9b7d-2f4a6c8e0b1d","order_no":"A-1001"}}';
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(completedRecord(event, { status: 201, body: stored })));

    // Act
    const response = await invoke(createLegacy, event);

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.raw).toBe(stored);
    expect(response.headers).toMatchObject({ 'idempotent-replayed': 'true' });
  });

  it('reads the record when DynamoDB does not return it with the failed condition', async () => {
    // Prepare
    const event = createEvent();
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed());
    ddbMock.on(GetCommand, { Key: RECORD_KEY }).resolves({
      Item: {
        ...RECORD_KEY,
        status: 'completed',
        fingerprint: requestFingerprint(event),
        response_status: 201,
        response_headers: { 'content-type': 'application/json' },
        response_body: STORED_V2_BODY,
        expires_at: Math.floor(Date.now() / 1000) + 60,
      },
    });

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expect(response.raw).toBe(STORED_V2_BODY);
    expect(response.headers).toMatchObject({ 'idempotent-replayed': 'true' });
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: RECORD_KEY, ConsistentRead: true });
  });

  it('treats a record past its 24 hours as absent (TTL deletes lazily): it claims again and runs the request', async () => {
    // Prepare
    const event = createEvent();
    ddbMock.on(PutCommand, CLAIM).rejectsOnce(conditionFailed()).resolves({});
    ddbMock.on(GetCommand, { Key: RECORD_KEY }).resolves({
      Item: unmarshall(completedRecord(event, { status: 201, body: STORED_V2_BODY }, { expires_at: Math.floor(Date.now() / 1000) - 1 })),
    });

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.raw).not.toBe(STORED_V2_BODY);
    expect(response.headers).not.toHaveProperty('idempotent-replayed');
    expect(idempotencyPuts()).toHaveLength(2);
    expect(orderPuts()).toHaveLength(1);
  });

  it('gets 409 with Retry-After while the first request is still in flight', async () => {
    // Prepare
    const event = createEvent();
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(event)));

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expect(response.statusCode).toBe(409);
    expect(response.headers).toEqual({ 'content-type': 'application/json', 'retry-after': '1' });
    expect(response.body).toEqual({
      success: false,
      data: null,
      errors: { message: ['A request with this idempotency key is still being processed.'] },
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
    expect(orderPuts()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
  });

  describe('of a create whose 201 was not stored (its claim is the record)', () => {
    const FIRST_TRACE_ID = '2026-03-01T10:00:00Z:api:0badc0de';
    const A_1001 = derivedOrderUuid('A-1001');
    /** The order as the first request with the key created it (stamped with the key's write id), or as another request did. */
    const orderCreatedBy = (event: APIGatewayProxyEvent, by: 'this request' | 'another request') =>
      ddbMock.on(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${A_1001}` }, ConsistentRead: true }).resolves({
        Item: storedOrder({
          uuid: A_1001,
          order_no: 'A-1001',
          created_at: new Date().toISOString(),
          created_write_id:
            by === 'this request' ? requestIdentity(MERCHANT.id, { key: KEY, fingerprint: requestFingerprint(event) }).writeId : 'w-other',
        }),
      });
    const firstAnswer = `{"success":true,"data":{"order":{"uuid":"${A_1001}","order_no":"A-1001"}},"errors":null,"meta":{"trace_id":"${FIRST_TRACE_ID}"}}`;

    it('gets the first answer byte for byte, rebuilt from the order and the trace id its claim keeps, while the claim is in flight', async () => {
      // Prepare
      const event = createEvent();
      ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(event, { trace_id: FIRST_TRACE_ID })));
      orderCreatedBy(event, 'this request');

      // Act
      const response = await invoke(createV2, event);

      // Assess
      expect(response.statusCode).toBe(201);
      expect(response.raw).toBe(firstAnswer);
      expect(response.headers).toEqual({ 'content-type': 'application/json', 'idempotent-replayed': 'true' });
      expect(orderPuts()).toHaveLength(0);
      expect(idempotencyUpdates()).toHaveLength(0);
    });

    it('gets it in the legacy envelope on the legacy route', async () => {
      // Prepare
      const event = legacyEvent();
      ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(event, { trace_id: FIRST_TRACE_ID })));
      orderCreatedBy(event, 'this request');

      // Act
      const response = await invoke(createLegacy, event);

      // Assess
      expect(response.statusCode).toBe(201);
      expect(response.body).toMatchObject({ success: true, data: { uuid: A_1001, order_no: 'A-1001' } });
      expect(response.body).not.toHaveProperty('meta');
      expect(response.headers).toMatchObject({ 'idempotent-replayed': 'true' });
    });

    it.each([
      ['not there yet', undefined],
      ['created by another request', 'another request'],
    ] as const)('gets 409 while the claim is in flight and the order is %s', async (_, by) => {
      // Prepare
      const event = createEvent();
      ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(event, { trace_id: FIRST_TRACE_ID })));
      if (by) orderCreatedBy(event, by);

      // Act
      const response = await invoke(createV2, event);

      // Assess
      expect(response.statusCode).toBe(409);
      expect(orderPuts()).toHaveLength(0);
    });

    it('takes over a claim whose lease ran out and answers from the order it created, storing that answer in the one conditional write', async () => {
      // Prepare
      const event = createEvent();
      const deadUntil = Date.now() - 1;
      ddbMock
        .on(PutCommand, CLAIM)
        .rejects(conditionFailed(inProgressRecord(event, { trace_id: FIRST_TRACE_ID, in_flight_until: deadUntil })));
      orderCreatedBy(event, 'this request');

      // Act
      const response = await invoke(createV2, event);

      // Assess
      expect(response.statusCode).toBe(201);
      expect(response.raw).toBe(firstAnswer);
      expect(response.headers).toMatchObject({ 'idempotent-replayed': 'true' });
      expect(orderPuts()).toHaveLength(0);
      const [takeover] = idempotencyUpdates();
      expect(idempotencyUpdates()).toHaveLength(1);
      expect(takeover?.ConditionExpression).toBe('#status = :inProgress AND fingerprint = :fingerprint AND in_flight_until = :deadUntil');
      expect(takeover?.ExpressionAttributeValues).toMatchObject({ ':deadUntil': deadUntil, ':statusCode': 201, ':body': firstAnswer });
    });

    it('takes over a claim whose lease ran out and runs the request when the order is not there, the claim then keeping its own trace id', async () => {
      // Prepare
      const event = createEvent();
      ddbMock
        .on(PutCommand, CLAIM)
        .rejects(conditionFailed(inProgressRecord(event, { trace_id: FIRST_TRACE_ID, in_flight_until: Date.now() - 1 })));

      // Act
      const response = await invoke(createV2, event);

      // Assess
      expect(response.statusCode).toBe(201);
      expect(response.headers).not.toHaveProperty('idempotent-replayed');
      expect(orderPuts()).toHaveLength(1);
      const [takeover] = idempotencyUpdates();
      expect(idempotencyUpdates()).toHaveLength(1);
      expect(takeover?.UpdateExpression).toBe('SET claim_id = :claimId, trace_id = :traceId, in_flight_until = :until');
      expect(takeover?.ExpressionAttributeValues).toMatchObject({ ':traceId': response.body.meta.trace_id });
    });

    it('knows its own takeover when its answer was lost (the SDK retried): the claim keeps the trace id of the answer it gives', async () => {
      // Prepare: the takeover was applied, its answer lost; the claim is then refused by that takeover
      const event = createEvent();
      const dead = inProgressRecord(event, { trace_id: FIRST_TRACE_ID, in_flight_until: Date.now() - 1 });
      let taken: Record<string, unknown> | undefined;
      ddbMock.on(PutCommand, CLAIM).callsFake(async () => {
        throw conditionFailed(taken ? marshall(taken) : dead);
      });
      ddbMock.on(UpdateCommand, { Key: RECORD_KEY }).callsFake(async (input: UpdateCommandInput) => {
        if (taken) throw conditionFailed(marshall(taken));
        const values = input.ExpressionAttributeValues ?? {};
        taken = { ...unmarshall(dead), claim_id: values[':claimId'], trace_id: values[':traceId'], in_flight_until: values[':until'] };
        throw conditionFailed(marshall(taken));
      });

      // Act
      const response = await invoke(createV2, event);

      // Assess: it runs under its takeover, whose trace id is its own
      expect(response.statusCode).toBe(201);
      expect(orderPuts()).toHaveLength(1);
      expect(taken?.trace_id).toBe(response.body.meta.trace_id);
    });
  });

  it('gets the legacy envelope for 409 on the legacy route', async () => {
    // Prepare
    const event = legacyEvent();
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(event)));

    // Act
    const response = await invoke(createLegacy, event);

    // Assess
    expect(response.statusCode).toBe(409);
    expect(response.body).toEqual({ success: false, message: 'A request with this idempotency key is still being processed.', data: [] });
  });
});

describe('the same key with a different request', () => {
  it.each([
    ['another body', createEvent({ body: orderBody({ order_no: 'A-2002' }) })],
    [
      'another path',
      apiEvent('orders-cancel', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID }, headers: { 'Idempotency-Key': KEY } }),
    ],
  ])('is 422 with errors.message (%s), even while the first is in flight, and changes nothing', async (_, event) => {
    // Prepare
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(createEvent())));

    // Act
    const response = await invoke(event.httpMethod === 'POST' && event.path.endsWith('/cancel') ? cancelOrder : createV2, event);

    // Assess
    expectV2Error(response, 422, { message: ['The idempotency key has already been used with a different request.'] });
    expect(orderPuts()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
  });

  it('is 422 in the legacy envelope on the legacy route', async () => {
    // Prepare
    const first = legacyEvent();
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(completedRecord(first, { status: 201, body: '{}' })));

    // Act
    const response = await invoke(createLegacy, legacyEvent({ body: orderBody({ order_no: 'A-2002' }) }));

    // Assess
    expect(response.statusCode).toBe(422);
    expect(response.body).toEqual({
      success: false,
      message: 'The given data was invalid.',
      data: { errors: { message: ['The idempotency key has already been used with a different request.'] } },
    });
  });
});

describe('claiming a key', () => {
  it('takes over a record whose lease ran out only for the same request (fingerprint), and only that very claim', async () => {
    // Prepare
    const event = createEvent();
    const deadUntil = Date.now() - 1;
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(event, { in_flight_until: deadUntil })));

    // Act
    await invoke(createV2, event);

    // Assess
    const [takeover] = idempotencyUpdates();
    expect(takeover?.ConditionExpression).toBe('#status = :inProgress AND fingerprint = :fingerprint AND in_flight_until = :deadUntil');
    expect(takeover?.ExpressionAttributeValues).toMatchObject({ ':fingerprint': requestFingerprint(event), ':deadUntil': deadUntil });
    expect(idempotencyPuts()[0]?.args[0].input.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
  });

  it('holds the key when its claim is refused by its own applied attempt (the old image has its claim id): the request runs, not 409', async () => {
    // Prepare: the SDK retried a claim whose first attempt was applied but whose answer was lost.
    ddbMock.on(PutCommand, CLAIM).callsFake(async (input: PutCommandInput) => {
      throw conditionFailed(marshall(input.Item ?? {}));
    });

    // Act
    const response = await invoke(createV2, createEvent());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.headers).not.toHaveProperty('idempotent-replayed');
    expect(orderPuts()).toHaveLength(1);
    expect(idempotencyPuts()).toHaveLength(1);
    // The claim it holds is the create's record.
    expect(idempotencyUpdates()).toHaveLength(0);
  });

  it('knows its own claim when the SDK gave up on a throttled retry after the first attempt was applied: the request runs, not 409', async () => {
    // Prepare: the first attempt was applied and its answer lost (the SDK's retries throttled), so the
    // request's own retry of the claim is refused by it.
    let applied: Record<string, unknown> | undefined;
    ddbMock.on(PutCommand, CLAIM).callsFake(async (input: PutCommandInput) => {
      if (applied === undefined) {
        applied = input.Item;
        throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { attempts: 3 } });
      }
      throw conditionFailed(marshall(applied));
    });

    // Act
    const response = await invoke(createV2, createEvent());

    // Assess
    expect(response.statusCode).toBe(201);
    expect(idempotencyPuts()).toHaveLength(2);
    expect(orderPuts()).toHaveLength(1);
  });

  it.each([
    ['released (its request failed with a 5xx)', { in_flight_until: 0 }],
    ['dead (its lease ran out)', { in_flight_until: Date.now() - 1 }],
  ])('answers 422 reused to another request while the record of the key is %s within its 24 hours, and runs nothing', async (_, state) => {
    // Prepare
    const first = createEvent();
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(first, state)));

    // Act
    const response = await invoke(createV2, createEvent({ body: orderBody({ order_no: 'A-2002' }) }));

    // Assess
    expectV2Error(response, 422, { message: ['The idempotency key has already been used with a different request.'] });
    expect(idempotencyPuts()).toHaveLength(1);
    expect(orderPuts()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
  });

  it('lets a retry of the same request take over a released record: it claims again and runs', async () => {
    // Prepare: its earlier try failed with a 5xx, which released the claim.
    const event = createEvent();
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(inProgressRecord(event, { in_flight_until: 0 })));

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expect(response.statusCode).toBe(201);
    expect(idempotencyPuts()).toHaveLength(1);
    expect(orderPuts()).toHaveLength(1);
    expect(idempotencyUpdates()[0]?.ExpressionAttributeValues).toMatchObject({ ':deadUntil': 0, ':traceId': response.body.meta.trace_id });
  });

  it('answers 503 with Retry-After, not 500, when the key cannot be claimed in 3 attempts, and runs nothing', async () => {
    // Prepare: every attempt is refused, and the record is gone (expired, released) by the time it is read.
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed());
    ddbMock.on(GetCommand, { Key: RECORD_KEY }).resolves({});

    // Act
    const response = await invoke(createV2, createEvent());

    // Assess
    expectV2Error(response, 503, { message: ['The service is busy. Please retry the request.'] });
    expect(response.headers).toMatchObject({ 'retry-after': '1' });
    expect(idempotencyPuts()).toHaveLength(3);
    expect(orderPuts()).toHaveLength(0);
    expect(idempotencyUpdates()).toHaveLength(0);
  });
});

describe('a bad key', () => {
  it.each([
    ['empty', '', 'The idempotency key field is required.'],
    ['256 characters', 'k'.repeat(256), 'The idempotency key field must not be greater than 255 characters.'],
  ])('(%s) is 400 keyed idempotency_key, and nothing is claimed or created', async (_, key, message) => {
    // Act
    const response = await invoke(createV2, createEvent({ headers: { 'Idempotency-Key': key } }));

    // Assess
    expectV2Error(response, 400, { idempotency_key: [message] });
    expect(idempotencyPuts()).toHaveLength(0);
    expect(orderPuts()).toHaveLength(0);
  });

  it('is 400 in the legacy envelope on the legacy route', async () => {
    // Act
    const response = await invoke(createLegacy, legacyEvent({ headers: { 'Idempotency-Key': '' } }));

    // Assess
    expect(response.statusCode).toBe(400);
    expect(response.body).toEqual({
      success: false,
      message: 'The idempotency key field is required.',
      data: { errors: { idempotency_key: ['The idempotency key field is required.'] } },
    });
    expect(idempotencyPuts()).toHaveLength(0);
    expect(orderPuts()).toHaveLength(0);
  });

  it('comes after authentication: an unauthenticated caller gets 401 and learns nothing else', async () => {
    // Act
    const response = await invoke(createV2, createEvent({ token: null, headers: { 'Idempotency-Key': '' } }));

    // Assess
    expect(response.statusCode).toBe(401);
    expect(idempotencyPuts()).toHaveLength(0);
  });
});

describe('routes other than POST', () => {
  it.each([
    [
      'GET',
      () =>
        invoke(
          getOrder,
          apiEvent('orders-get', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID }, headers: { 'Idempotency-Key': '' } }),
        ),
    ],
    [
      'PATCH',
      () =>
        invoke(
          updateOrder,
          apiEvent('orders-update', {
            token: TOKENS.live,
            pathParameters: { uuid: ORDER_UUID },
            body: { total_shipping_value: 100 },
            headers: { 'Idempotency-Key': KEY },
          }),
        ),
    ],
  ])('ignore the header (%s)', async (_, call) => {
    // Act
    const response = await call();

    // Assess
    expect(response.statusCode).toBe(200);
    expect(idempotencyPuts()).toHaveLength(0);
  });
});

describe('requestFingerprint', () => {
  it('is the same for the same method, path and JSON body, and differs when any of them differs', () => {
    // Prepare
    const base = createEvent();
    const sameBody = { ...base, headers: { ...base.headers, 'X-Other': 'ignored' } };
    const otherBody = createEvent({ body: { ...orderBody(), order_no: 'A-9999' } });
    const otherPath = { ...base, path: '/api/orders/create' };
    const base64 = { ...base, body: Buffer.from(base.body!).toString('base64'), isBase64Encoded: true };

    // Assess
    expect(requestFingerprint(sameBody)).toBe(requestFingerprint(base));
    expect(requestFingerprint(base64)).toBe(requestFingerprint(base));
    expect(requestFingerprint(otherBody)).not.toBe(requestFingerprint(base));
    expect(requestFingerprint(otherPath)).not.toBe(requestFingerprint(base));
  });

  it('compares the body as JSON: key order and whitespace do not matter, values and array order do', () => {
    // Prepare
    const event = (rawBody: string) => createEvent({ rawBody });
    const base = requestFingerprint(event('{"a":1,"b":{"c":[1,2],"d":"x"}}'));

    // Assess
    expect(requestFingerprint(event(' {\n  "b": { "d": "x", "c": [1, 2] },\n  "a": 1.0\n}\n'))).toBe(base);
    expect(requestFingerprint(event('{"a":1,"b":{"c":[2,1],"d":"x"}}'))).not.toBe(base);
    expect(requestFingerprint(event('{"a":"1","b":{"c":[1,2],"d":"x"}}'))).not.toBe(base);
    expect(requestFingerprint(event('{"a":1,"b":{"c":[1,2],"d":"x"},"e":null}'))).not.toBe(base);
    expect(requestFingerprint(event('{"__proto__":{"a":1}}'))).not.toBe(requestFingerprint(event('{"a":1}')));
    expect(requestFingerprint(event('{}'))).not.toBe(requestFingerprint(event('')));
  });

  it('spells a body nested 100,000 levels deep (JSON.parse takes it) without overflowing the stack, and tells the depth apart', () => {
    // Prepare
    const nested = (depth: number) => `{"a":1,"x":${'['.repeat(depth)}${']'.repeat(depth)}}`;

    // Act
    const deep = requestFingerprint(createEvent({ rawBody: nested(100_000) }));
    const deeper = requestFingerprint(createEvent({ rawBody: nested(100_001) }));

    // Assess
    expect(deep).toMatch(/^[0-9a-f]{64}$/);
    expect(deeper).not.toBe(deep);
  });
});

describe('the route manifest decides which routes take the header', () => {
  it('refuses to build a POST route without Idempotency-Key handling, or another route with it', async () => {
    // Prepare
    const { apiHandler } = await import('#shared/http/api-handler');
    const { postApiHandler } = await import('#shared/http/post-api-handler');
    const handle = async () => ({ data: null });

    const { route } = await import('#functions/routes');

    // Act / Assess: a type error first (tsc checks the expectations), and refused at run time for plain JavaScript callers
    // @ts-expect-error a POST route is built with postApiHandler
    expect(() => apiHandler(route('orders-create'), {}, handle)).toThrow('orders-create: a POST route is built with postApiHandler');
    // @ts-expect-error only POST routes take Idempotency-Key
    expect(() => postApiHandler(route('orders-get'), {}, handle)).toThrow('orders-get: only POST routes take Idempotency-Key');
  });
});
