/**
 * A write DynamoDB applied although its caller never got the answer (a timeout after the commit,
 * the SDK's own retry of it, a function stopped right after it) must not make the retry answer
 * "taken" or "already cancelled": the retry recognises its own write and answers it again.
 * A request with an Idempotency-Key stamps what it writes with a write id derived from the key
 * (shared/request-identity.ts), so a client's retry with the same key recognises the first
 * attempt's order (whose key is derived from its order_no) and invite; a request without a key
 * still recognises the SDK's retries of its own write.
 */
import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import {
  GetCommand,
  PutCommand,
  type PutCommandInput,
  TransactWriteCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as acceptRequest } from '#functions/affiliate-requests/accept';
import { handler as declineRequest } from '#functions/affiliate-requests/decline';
import { handler as createInvite } from '#functions/invites/create';
import { handler as cancelOrder } from '#functions/orders/cancel';
import { handler as createV2 } from '#functions/orders/create';
import { handler as createLegacy } from '#functions/orders/create-legacy';
import { handler as updateOrder } from '#functions/orders/update';
import { requestFingerprint } from '#shared/http/request-fingerprint';
import { requestIdentity } from '#shared/request-identity';
import { type ApiResponse, apiEvent, expectV2Error, invoke } from './support/api';
import { conditionFailed, ddbMock, resetAwsMocks, sqsMock } from './support/aws';
import {
  COUNTS_PK,
  derivedOrderUuid,
  MERCHANT,
  MERCHANT_PK,
  ORDER_PUT,
  ORDER_UUID,
  orderBody,
  orderPuts,
  REQUEST_KEY,
  REQUEST_UUID,
  storedAffiliate,
  storedOrder,
  storedPendingRequest,
  stubAuth,
  stubOrderCreate,
  TOKENS,
  UUID,
} from './support/fixtures';

const sesMock = mockClient(SESClient);

const KEY = '5c0e9a7b-2d4f-4e61-8a3b-7c9d1e2f4a6b';
const RECORD_KEY = { pk: MERCHANT_PK, sk: `IDEMPOTENCY#${KEY}` };
/** The uuid every create of order_no A-1001 puts its order under. */
const A_1001_UUID = derivedOrderUuid('A-1001');
const CUSTOMER_KEY = { pk: MERCHANT_PK, sk: 'CUSTOMER#dan@example.com' };
const ORDER_KEY = { pk: MERCHANT_PK, sk: `ORDER#${ORDER_UUID}` };
/** The write id of a request other than the one under test. */
const OTHER_REQUESTS_WRITE_ID = '1a2b3c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d';
/** A name-based (version 5) UUID: what a keyed request's uuids and write ids look like. */
const DERIVED_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const REUSED = 'The idempotency key has already been used with a different request.';

/** The identity the API gives a request carrying KEY (merchant, key and the request's fingerprint). */
const identityOf = (event: APIGatewayProxyEvent) => requestIdentity(MERCHANT.id, { key: KEY, fingerprint: requestFingerprint(event) });

const keyedCreate = (route: 'orders-create' | 'orders-create-legacy', body = orderBody()) =>
  apiEvent(route, { token: TOKENS.live, body, headers: { 'Idempotency-Key': KEY } });

const CREATES = [
  { label: 'V2', route: 'orders-create', handler: createV2, uuidOf: (body: ApiResponse['body']): string => body.data.order.uuid },
  { label: 'legacy', route: 'orders-create-legacy', handler: createLegacy, uuidOf: (body: ApiResponse['body']): string => body.data.uuid },
] as const;

/** The order list's block count item of a block (256 sequence numbers each). */
const orderBlockKey = (block: number) => ({ pk: COUNTS_PK, sk: `orders#all#${String(block).padStart(8, '0')}` });

/**
 * The refusal of a put of order A-1001 because it is stored (seq 300, in block 1), created a minute
 * ago by the request of `writeId` (and last written by it, unless `overrides` say): what DynamoDB
 * hands back with ALL_OLD.
 */
const storedBy = (writeId: string, overrides: Record<string, unknown> = {}) =>
  conditionFailed(
    marshall(
      storedOrder({
        uuid: A_1001_UUID,
        seq: 300,
        order_no: 'A-1001',
        version: 1,
        created_at: new Date(Date.now() - 60_000).toISOString(),
        created_write_id: writeId,
        last_write_id: writeId,
        ...overrides,
      }),
    ),
  );

const updateInputs = () => ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input as UpdateCommandInput);
/** The block count changes (ADD n :delta), as key -> delta. */
const countAdds = () => updateInputs().filter((input) => input.ExpressionAttributeValues?.[':delta'] !== undefined);
/** The block counts marked for an exact recount (an entry in the merchant's RECOUNT partition of gsi2). */
const recountMarks = () =>
  updateInputs()
    .filter((input) => input.ExpressionAttributeValues?.[':workPartition'] === `${MERCHANT_PK}#RECOUNT`)
    .map((input) => input.Key);
/** What the request stored as its idempotent response. */
const storedResponse = () => {
  const input = updateInputs().find((update) => update.Key?.sk === RECORD_KEY.sk && update.ExpressionAttributeValues?.[':statusCode']);
  return { statusCode: input?.ExpressionAttributeValues?.[':statusCode'], body: input?.ExpressionAttributeValues?.[':body'] };
};

beforeEach(() => {
  resetAwsMocks();
  sesMock.reset();
  sesMock.on(SendEmailCommand).resolves({ MessageId: 'e-1' });
  stubAuth();
  stubOrderCreate({ seq: 42 });
  ddbMock.on(PutCommand).resolves({});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a keyed order create whose first attempt was stored but whose answer was lost', () => {
  describe.each(CREATES)('on the $label route', ({ route, handler, uuidOf }) => {
    it('finds its own order in the refusal of its put (its write id): 201 with the same uuid and order_no, not read or written again, its block marked for recount', async () => {
      // Prepare: the order of A-1001 is stored, stamped with this request's write id.
      const event = keyedCreate(route);
      ddbMock.on(PutCommand, ORDER_PUT).rejects(storedBy(identityOf(event).writeId));

      // Act
      const response = await invoke(handler, event);

      // Assess
      expect(response.statusCode).toBe(201);
      expect(uuidOf(response.body)).toBe(A_1001_UUID);
      expect(uuidOf(response.body)).toMatch(DERIVED_UUID);
      expect(orderPuts()).toHaveLength(1);
      // The refusal handed the order back: no read of it, no transaction.
      expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${A_1001_UUID}` } });
      expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
      // Whether the first attempt counted the order is unknown: its block is recounted, never added to twice
      // (the sequence number this attempt took beside its reads stays unused).
      expect(countAdds()).toEqual([]);
      expect(recountMarks()).toEqual([orderBlockKey(1)]);
      expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
        TableName: 'unit-table',
        Key: orderBlockKey(1),
        UpdateExpression:
          'ADD n :zero SET #type = :type, marked_at = :now, gsi2pk = :workPartition, gsi2sk = if_not_exists(gsi2sk, :workSince)',
        ExpressionAttributeValues: expect.objectContaining({ ':workPartition': `${MERCHANT_PK}#RECOUNT` }),
      });
      // The first attempt's write reached the table's stream: the change feed announces the order and
      // upserts its customer from it, so the retry does neither.
      expect(ddbMock.commandCalls(UpdateCommand, { Key: CUSTOMER_KEY })).toHaveLength(0);
      expect(sqsMock).not.toHaveReceivedAnyCommand();
      // Its 201 is not stored: a retry is answered from this order and the claim's trace id.
      expect(storedResponse()).toEqual({ statusCode: undefined, body: undefined });
    });
  });

  it('finds its own order though a PATCH or cancel has written it since (another last write id): 201, not order_no taken', async () => {
    // Prepare
    const event = keyedCreate('orders-create');
    ddbMock.on(PutCommand, ORDER_PUT).rejects(storedBy(identityOf(event).writeId, { last_write_id: OTHER_REQUESTS_WRITE_ID, version: 2 }));

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.body.data.order.uuid).toBe(A_1001_UUID);
  });

  it('answers 422 order_no taken to its key used again after the key could have expired (the order is over 24 hours old)', async () => {
    // Prepare
    const event = keyedCreate('orders-create');
    const dayAgo = new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString();
    ddbMock.on(PutCommand, ORDER_PUT).rejects(storedBy(identityOf(event).writeId, { created_at: dayAgo }));

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expectV2Error(response, 422, { order_no: ['The order no has already been taken.'] });
  });

  it('answers 422 order_no taken when its put is refused by an order another request stored (another write id), and reads no order', async () => {
    // Prepare
    const event = keyedCreate('orders-create');
    ddbMock.on(PutCommand, ORDER_PUT).rejects(storedBy(OTHER_REQUESTS_WRITE_ID, { created_at: storedOrder().created_at }));

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expectV2Error(response, 422, { order_no: ['The order no has already been taken.'] });
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: { pk: MERCHANT_PK, sk: `ORDER#${A_1001_UUID}` } });
    expect(countAdds()).toEqual([]);
    expect(recountMarks()).toEqual([]);
    expect(storedResponse()).toEqual({ statusCode: 422, body: response.raw });
  });

  it('answers 422 order_no taken, never the stored order, when the order was stored under the same key for another body (another write id)', async () => {
    // Prepare: the key was used for another request with this order_no, whose record has expired.
    const event = keyedCreate('orders-create');
    const otherBody = keyedCreate('orders-create', orderBody({ total_shipping_value: 0 }));
    ddbMock.on(PutCommand, ORDER_PUT).rejects(storedBy(identityOf(otherBody).writeId, { created_at: storedOrder().created_at }));

    // Act
    const response = await invoke(createV2, event);

    // Assess
    expectV2Error(response, 422, { order_no: ['The order no has already been taken.'] });
    expect(countAdds()).toEqual([]);
    expect(recountMarks()).toEqual([]);
    expect(ddbMock.commandCalls(UpdateCommand, { Key: CUSTOMER_KEY })).toHaveLength(0);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });
});

describe('an order create without a key whose put was applied by an earlier attempt of the same call (the SDK retried it)', () => {
  it('recognises its own order by the write id it put: 201 with it, its block marked for recount', async () => {
    // Prepare: the put answers as DynamoDB does to a retry of an applied put: refused, holding what was put.
    ddbMock.on(PutCommand, ORDER_PUT).callsFake(async (input: PutCommandInput) => {
      throw conditionFailed(marshall({ ...input.Item, seq: 300, gsi1sk: '000000000300' }, { removeUndefinedValues: true }));
    });

    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.body.data.order).toEqual({ uuid: A_1001_UUID, order_no: 'A-1001' });
    expect(countAdds()).toEqual([]);
    expect(recountMarks()).toEqual([orderBlockKey(1)]);
  });
});

describe('the identity of a request', () => {
  it('with a key, names the same order and write id on every retry of the same request, and others for another key or body', () => {
    // Prepare
    const event = keyedCreate('orders-create');
    const otherBody = keyedCreate('orders-create', orderBody({ order_no: 'A-1002' }));
    const otherKey = requestIdentity(MERCHANT.id, { key: `${KEY}-2`, fingerprint: requestFingerprint(event) });

    // Act
    const first = identityOf(event);
    const retry = identityOf(keyedCreate('orders-create'));

    // Assess
    expect(retry.newUuid('order')).toBe(first.newUuid('order'));
    expect(retry.writeId).toBe(first.writeId);
    expect(first.newUuid('order')).toMatch(DERIVED_UUID);
    expect(first.writeId).toMatch(DERIVED_UUID);
    expect(new Set([first.newUuid('order'), first.newUuid('invite'), first.writeId]).size).toBe(3);
    expect(identityOf(otherBody).newUuid('order')).not.toBe(first.newUuid('order'));
    expect(otherKey.newUuid('order')).not.toBe(first.newUuid('order'));
    expect(requestIdentity(MERCHANT.id, { key: KEY, fingerprint: requestFingerprint(event) }).newUuid('order')).not.toBe(
      requestIdentity('a0a0a0a0-b1b1-4c2c-8d3d-e4e4e4e4e4e4', { key: KEY, fingerprint: requestFingerprint(event) }).newUuid('order'),
    );
  });

  it('without a key, is random: a new uuid each time, and a write id of its own', () => {
    // Act
    const identity = requestIdentity(MERCHANT.id, undefined);
    const other = requestIdentity(MERCHANT.id, undefined);

    // Assess
    expect(identity.newUuid('order')).toMatch(UUID);
    expect(identity.newUuid('order')).not.toBe(identity.newUuid('order'));
    expect(identity.writeId).toMatch(UUID);
    expect(identity.writeId).not.toBe(other.writeId);
  });
});

describe('an order update refused by its own applied write', () => {
  const cancelledOrder = (lastWriteId: string) =>
    marshall(
      storedOrder({
        cancelled_at: '2026-03-02T10:00:00.000Z',
        updated_at: '2026-03-02T10:00:00.000Z',
        version: 2,
        last_write_id: lastWriteId,
      }),
    );
  const keyedCancel = () =>
    apiEvent('orders-cancel', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID }, headers: { 'Idempotency-Key': KEY } });

  it('cancel: answers 200 with the order when the old image carries the write id of this request (its key), not 422 already cancelled', async () => {
    // Prepare: the first attempt cancelled the order; its answer was lost, the client retries with its key.
    const event = keyedCancel();
    const { writeId } = identityOf(event);
    ddbMock.on(UpdateCommand, { Key: ORDER_KEY }).rejects(conditionFailed(cancelledOrder(writeId)));

    // Act
    const response = await invoke(cancelOrder, event);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.order).toMatchObject({ uuid: ORDER_UUID, cancelled_at: '2026-03-02T10:00:00.000Z' });
    expect(response.body.data.order).not.toHaveProperty('last_write_id');
    const [write] = ddbMock.commandCalls(UpdateCommand, { Key: ORDER_KEY });
    expect(write?.args[0].input.ExpressionAttributeValues?.[':writeId']).toBe(writeId);
    expect(writeId).toMatch(DERIVED_UUID);
    // Nothing to SQS: the change feed announces order.cancelled from the first attempt's write.
    expect(sqsMock).not.toHaveReceivedAnyCommand();
    expect(storedResponse()).toEqual({ statusCode: 200, body: response.raw });
  });

  it("cancel: answers 200 when the SDK's retry of the request's own write met that write (no key)", async () => {
    // Prepare: the refusal shows whatever write id this request stamped.
    ddbMock.on(UpdateCommand, { Key: ORDER_KEY }).callsFake(async (input: UpdateCommandInput) => {
      throw conditionFailed(cancelledOrder(String(input.ExpressionAttributeValues?.[':writeId'])));
    });

    // Act
    const response = await invoke(cancelOrder, apiEvent('orders-cancel', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.order).toMatchObject({ uuid: ORDER_UUID, cancelled_at: '2026-03-02T10:00:00.000Z' });
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
  });

  it('cancel: still answers 422 already cancelled when another request (another write id) cancelled the order', async () => {
    // Prepare
    const event = keyedCancel();
    ddbMock.on(UpdateCommand, { Key: ORDER_KEY }).rejects(conditionFailed(cancelledOrder('7f6e5d4c-3b2a-4190-8fed-cba987654321')));

    // Act
    const response = await invoke(cancelOrder, event);

    // Assess
    expectV2Error(response, 422, { message: ['The order is already cancelled.'] });
  });

  it("PATCH: answers 200 with the order when the SDK's retry of the request's own write met that write", async () => {
    // Prepare
    ddbMock.on(UpdateCommand, { Key: ORDER_KEY }).callsFake(async (input: UpdateCommandInput) => {
      throw conditionFailed(
        marshall(
          storedOrder({
            total_shipping_value: 995,
            version: 2,
            last_write_id: input.ExpressionAttributeValues?.[':writeId'],
          }),
        ),
      );
    });

    // Act
    const response = await invoke(
      updateOrder,
      apiEvent('orders-update', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID }, body: { total_shipping_value: 995 } }),
    );

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.order).toMatchObject({ uuid: ORDER_UUID, total_shipping_value: 995, cancelled_at: null });
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
  });

  it('PATCH: still answers 422 cancelled when the order was cancelled by another request (another write id)', async () => {
    // Prepare
    ddbMock.on(UpdateCommand, { Key: ORDER_KEY }).rejects(conditionFailed(cancelledOrder('7f6e5d4c-3b2a-4190-8fed-cba987654321')));

    // Act
    const response = await invoke(
      updateOrder,
      apiEvent('orders-update', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID }, body: { total_shipping_value: 995 } }),
    );

    // Assess
    expectV2Error(response, 422, { message: ['The order is cancelled and can no longer be updated.'] });
  });
});

describe('an invite, accept or decline refused by its own applied write', () => {
  const ANOTHER_WRITE_ID = '7f6e5d4c-3b2a-4190-8fed-cba987654321';
  const countBlock = (listAndBucket: string) => ({ pk: COUNTS_PK, sk: `${listAndBucket}#00000000` });
  const request = storedPendingRequest;
  const decided = (status: 'accepted' | 'declined', lastWriteId: string) =>
    request({
      gsi1pk: `${MERCHANT_PK}#affiliate_requests#${status}`,
      status,
      decided_at: '2026-03-02T10:00:00.000Z',
      updated_at: '2026-03-02T10:00:00.000Z',
      last_write_id: lastWriteId,
    });
  const keyed = (route: 'affiliate-requests-accept' | 'affiliate-requests-decline') =>
    apiEvent(route, { token: TOKENS.live, pathParameters: { uuid: REQUEST_UUID }, headers: { 'Idempotency-Key': KEY } });

  const INVITE_BODY = { email: 'erin@example.com', sender_email: 'owner@acme.example', content: 'Join us' };
  const USER_KEY = { pk: MERCHANT_PK, sk: 'USER#owner@acme.example' };
  const INVITE_GUARD_KEY = { pk: MERCHANT_PK, sk: 'INVITE_EMAIL#erin@example.com' };
  const storedInvite = (uuid: string, email = INVITE_BODY.email) => ({
    pk: MERCHANT_PK,
    sk: `INVITE#${uuid}`,
    gsi1pk: `${MERCHANT_PK}#invites#all`,
    gsi1sk: '000000000009',
    type: 'invite',
    uuid,
    seq: 9,
    email,
    sender_email: 'owner@acme.example',
    content: 'Join us',
    link_used_at: null,
    created_at: '2026-03-02T10:00:00.000Z',
    updated_at: '2026-03-02T10:00:00.000Z',
  });
  const keyedInvite = () => apiEvent('invites-create', { token: TOKENS.live, body: INVITE_BODY, headers: { 'Idempotency-Key': KEY } });
  const stubInviteReads = (uuid: string, invite: Record<string, unknown>) => {
    ddbMock
      .on(GetCommand, { Key: USER_KEY })
      .resolves({ Item: { ...USER_KEY, type: 'user', email: 'owner@acme.example', name: 'Olivia' } });
    ddbMock.on(GetCommand, { Key: INVITE_GUARD_KEY }).resolves({ Item: { invite_uuid: uuid } });
    ddbMock.on(GetCommand, { Key: { pk: MERCHANT_PK, sk: `INVITE#${uuid}` } }).resolves({ Item: invite });
  };

  it('invite: finds its own invite on the e-mail guard it reads first: 200 with it, nothing written again, its block marked for recount', async () => {
    // Prepare
    const event = keyedInvite();
    const uuid = identityOf(event).newUuid('invite');
    stubInviteReads(uuid, storedInvite(uuid));

    // Act
    const response = await invoke(createInvite, event);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.invite).toEqual({
      uuid,
      email: 'erin@example.com',
      link_used_at: null,
      created_at: '2026-03-02T10:00:00.000Z',
      updated_at: '2026-03-02T10:00:00.000Z',
    });
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: { pk: MERCHANT_PK, sk: `INVITE#${uuid}` }, ConsistentRead: true });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(ddbMock).not.toHaveReceivedCommandWith(UpdateCommand, { Key: { pk: MERCHANT_PK, sk: 'COUNTER#invites' } });
    expect(countAdds()).toEqual([]);
    expect(recountMarks()).toEqual([countBlock('invites#all')]);
    // The e-mail projection is idempotent: written again.
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, { Key: { pk: `${MERCHANT_PK}#INVITE_EMAILS`, sk: '00000000' } });
    // An e-mail it still owes goes out with its follow-up (the change feed scheduled it from the first attempt's write).
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(storedResponse()).toEqual({ statusCode: 200, body: response.raw });
  });

  it('invite: answers 422 "key reused" when the invite under the key is for another address', async () => {
    // Prepare
    const event = keyedInvite();
    const uuid = identityOf(event).newUuid('invite');
    stubInviteReads(uuid, storedInvite(uuid, 'someone-else@example.com'));

    // Act
    const response = await invoke(createInvite, event);

    // Assess
    expectV2Error(response, 422, { message: [REUSED] });
    expect(recountMarks()).toEqual([]);
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('accept: answers 200 when the request reads as accepted by this request (its write id): no transaction, its count blocks marked for recount', async () => {
    // Prepare
    const event = keyed('affiliate-requests-accept');
    ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({ Item: decided('accepted', identityOf(event).writeId) });
    ddbMock.on(GetCommand, { Key: { pk: MERCHANT_PK, sk: 'AFFILIATE#bob' } }).resolves({ Item: storedAffiliate({ slug: 'bob', seq: 3 }) });
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const response = await invoke(acceptRequest, event);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.affiliate_request).toEqual({
      uuid: REQUEST_UUID,
      affiliate: { name: 'Bob', slug: 'bob' },
      status: 'active',
      requested_at: '2026-03-01T10:00:00.000Z',
    });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(countAdds()).toEqual([]);
    expect(recountMarks()).toEqual([
      countBlock('affiliate_requests#pending'),
      countBlock('affiliate_requests#accepted'),
      countBlock('affiliates#all'),
      countBlock('affiliates#tier%3Agold'),
    ]);
    expect(storedResponse()).toEqual({ statusCode: 200, body: response.raw });
  });

  it('accept: still answers 422 already accepted when another request (another write id) accepted it', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({ Item: decided('accepted', ANOTHER_WRITE_ID) });

    // Act
    const response = await invoke(acceptRequest, keyed('affiliate-requests-accept'));

    // Assess
    expectV2Error(response, 422, { message: ['The affiliate request has already been accepted.'] });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(recountMarks()).toEqual([]);
  });

  it('decline: answers 200 when the old image carries the write id of this request, its count blocks marked for recount instead of counted', async () => {
    // Prepare
    const event = keyed('affiliate-requests-decline');
    const { writeId } = identityOf(event);
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(UpdateCommand, { Key: REQUEST_KEY }).rejects(conditionFailed(marshall(decided('declined', writeId))));

    // Act
    const response = await invoke(declineRequest, event);

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.affiliate_request).toMatchObject({ uuid: REQUEST_UUID, status: 'declined' });
    expect(ddbMock.commandCalls(UpdateCommand, { Key: REQUEST_KEY })[0]?.args[0].input.ExpressionAttributeValues?.[':writeId']).toBe(
      writeId,
    );
    expect(countAdds()).toEqual([]);
    expect(recountMarks()).toEqual([countBlock('affiliate_requests#pending'), countBlock('affiliate_requests#declined')]);
    expect(storedResponse()).toEqual({ statusCode: 200, body: response.raw });
  });

  it('decline: still answers 422 already declined when another request (another write id) declined it', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({});
    ddbMock.on(UpdateCommand, { Key: REQUEST_KEY }).rejects(conditionFailed(marshall(decided('declined', ANOTHER_WRITE_ID))));

    // Act
    const response = await invoke(declineRequest, keyed('affiliate-requests-decline'));

    // Assess
    expectV2Error(response, 422, { message: ['The affiliate request has already been declined.'] });
    expect(recountMarks()).toEqual([]);
  });
});
