import { GetCommand, PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { padSeq } from '#shared/db/entities/base';
import { quotaKey } from '#shared/db/entities/quota';
import { requestFingerprint } from '#shared/http/request-fingerprint';
import { apiEvent, invoke } from './support/api';
import { conditionFailed, ddbMock, resetAwsMocks } from './support/aws';
import {
  AFFILIATE_KEY,
  COUNTS_PK,
  MERCHANT,
  MERCHANT_PK,
  ORDER_UUID,
  orderBody,
  stubAuth,
  stubOrderCreate,
  TOKENS,
} from './support/fixtures';

// The quota is enforced here (the other handler tests switch it off): loaded after the switch.
vi.stubEnv('QUOTA_ENFORCEMENT', 'on');
/** The handler with a fresh module graph: each test starts with a container that has seen no quota yet. */
let createV2: typeof import('#functions/orders/create')['handler'];

/**
 * The merchant's quota take, held until `answer()`; admitted then unless `refuse`; on a sequence
 * whose blocks derive their counts from `derivedFrom` on.
 */
const heldQuota = (refuse = false, derivedFrom = 0) => {
  let answer = () => {};
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  ddbMock.on(UpdateCommand, { Key: quotaKey(MERCHANT.id) }).callsFake(async (input: UpdateCommandInput) => {
    await answered;
    // Refused: the bucket stands a minute ahead (no token left); admitted: the take's own end.
    if (refuse) throw conditionFailed(marshall({ tat_us: Date.now() * 1000 + 60_000_000, orders_seq: 6 }));
    // A create's take also takes its order sequence number.
    return { Attributes: { tat_us: input.ExpressionAttributeValues?.[':end'], orders_seq: 7, orders_derived_from: derivedFrom } };
  });
  return { answer };
};

const affiliateReads = () => ddbMock.commandCalls(GetCommand, { Key: AFFILIATE_KEY }).length;
/** The PutItem that claims a key (the order's own put is stubbed apart). */
const CLAIM = { Item: { type: 'idempotency' } };
const claims = () => ddbMock.commandCalls(PutCommand, CLAIM).length;
/** The UpdateExpressions written to the key's record after the request (its response, or its release). */
const recorded = () =>
  ddbMock
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input as UpdateCommandInput)
    .filter((input) => String(input.Key?.sk).startsWith('IDEMPOTENCY#'))
    .map((input) => input.UpdateExpression);
const keyedEvent = () => apiEvent('orders-create', { token: TOKENS.live, body: orderBody(), headers: { 'Idempotency-Key': 'key-1' } });
/** A completed record of the key, as DynamoDB hands it back on a failed claim. */
const completedRecord = (event: APIGatewayProxyEvent, body: string) =>
  marshall({
    pk: MERCHANT_PK,
    sk: 'IDEMPOTENCY#key-1',
    type: 'idempotency',
    status: 'completed',
    fingerprint: requestFingerprint(event),
    claim_id: 'c-1',
    response_status: 201,
    response_headers: { 'content-type': 'application/json' },
    response_body: body,
    expires_at: Math.floor(Date.now() / 1000) + 3600,
  });
const orderPuts = () => ddbMock.commandCalls(PutCommand).filter((call) => String(call.args[0].input.Item?.sk).startsWith('ORDER#')).length;

beforeEach(async () => {
  vi.resetModules();
  ({ handler: createV2 } = await import('#functions/orders/create'));
  resetAwsMocks();
  stubAuth();
  stubOrderCreate();
  ddbMock.on(PutCommand, CLAIM).resolves({});
});

describe('a create and the merchant quota', () => {
  it.each([
    ['without an Idempotency-Key', () => apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }), 0],
    ['with one, claiming the key beside them too', () => keyedEvent(), 1],
  ])('reads beside the quota decision %s, and puts the order only once admitted', async (_name, event, claimed) => {
    // Prepare
    const quota = heldQuota();

    // Act: the decision is held back until the first reads (and the claim) are out
    const answer = invoke(createV2, event());
    await vi.waitFor(() => expect([affiliateReads(), claims()]).toEqual([1, claimed]));
    const putsBeforeDecision = orderPuts();
    quota.answer();
    const response = await answer;

    // Assess
    expect(putsBeforeDecision).toBe(0);
    expect(response.statusCode).toBe(201);
    expect(orderPuts()).toBe(1);
    // A keyed create's claim is its record: its 201 is answered from the order to a retry, not stored.
    expect(claims()).toBe(claimed);
    expect(recorded()).toEqual([]);
  });

  it("numbers the order from the quota's take: one write for both, no ADD of its own", async () => {
    // Prepare
    const quota = heldQuota();
    quota.answer();

    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(201);
    const writes = ddbMock.commandCalls(UpdateCommand, { Key: quotaKey(MERCHANT.id) }).map((call) => call.args[0].input);
    expect(writes).toHaveLength(1);
    expect(writes[0]?.UpdateExpression).toMatch(/ADD #seq :one$/);
    expect(ddbMock.commandCalls(PutCommand)[0]?.args[0].input.Item?.gsi1sk).toBe(padSeq(7));
  });

  it('answers a keyed create only once its list count is done, and records nothing for its 201', async () => {
    // Prepare: admitted, on a block counted by ADD; the count's ADD held back until the answer is recorded
    heldQuota(false, 1 << 20).answer();
    let countAnswer = () => {};
    const countHeld = new Promise<void>((resolve) => {
      countAnswer = resolve;
    });
    ddbMock.on(UpdateCommand, { Key: { pk: COUNTS_PK, sk: 'orders#all#00000000' } }).callsFake(async () => {
      await countHeld;
      return {};
    });
    let answered = false;

    // Act
    const answer = invoke(createV2, keyedEvent()).then((response) => {
      answered = true;
      return response;
    });
    await vi.waitFor(() =>
      expect(ddbMock.commandCalls(UpdateCommand, { Key: { pk: COUNTS_PK, sk: 'orders#all#00000000' } })).toHaveLength(1),
    );
    const answeredBeforeCount = answered;
    countAnswer();
    const response = await answer;

    // Assess
    expect(answeredBeforeCount).toBe(false);
    expect(response.statusCode).toBe(201);
    expect(recorded()).toEqual([]);
  });

  it("answers the stored response of a key whose request is done, though its reads were out, and writes nothing but its number's hole", async () => {
    // Prepare: the claim finds a completed record of this very request
    const quota = heldQuota();
    const stored = JSON.stringify({ success: true, data: { order: { uuid: ORDER_UUID, order_no: 'A-1' } }, errors: null, meta: {} });
    ddbMock.on(PutCommand, CLAIM).rejects(conditionFailed(completedRecord(keyedEvent(), stored)));

    // Act
    const answer = invoke(createV2, keyedEvent());
    await vi.waitFor(() => expect(affiliateReads()).toBe(1));
    quota.answer();
    const response = await answer;

    // Assess
    expect(response.statusCode).toBe(201);
    expect(response.headers?.['idempotent-replayed']).toBe('true');
    expect(response.body).toEqual(JSON.parse(stored));
    expect(orderPuts()).toBe(0);
    expect(recorded()).toEqual([]);
    const counts = ddbMock.commandCalls(UpdateCommand, { Key: { pk: COUNTS_PK, sk: 'orders#all#00000000' } });
    expect(counts.map((call) => call.args[0].input.UpdateExpression)).toEqual([expect.stringMatching(/^ADD holes :hole/)]);
  });

  it('with an Idempotency-Key, answers 429 when refused and releases the key it claimed meanwhile, so the retry runs', async () => {
    // Prepare
    const quota = heldQuota(true);

    // Act
    const answer = invoke(createV2, keyedEvent());
    await vi.waitFor(() => expect(claims()).toBe(1));
    quota.answer();
    const response = await answer;

    // Assess
    expect(response.statusCode).toBe(429);
    expect(orderPuts()).toBe(0);
    // Released and forgotten: the request never ran, so any request may use the key now.
    expect(recorded()).toEqual([expect.stringContaining('#expires = :now')]);
  });

  it('claims no key and reads nothing when the container already knows the quota is spent: a refused flood costs no call', async () => {
    // Prepare: one refusal from the quota item teaches the container that the bucket is a minute ahead
    const quota = heldQuota(true);
    quota.answer();
    await invoke(createV2, keyedEvent());
    const [claimsBefore, readsBefore] = [claims(), affiliateReads()];
    const takesBefore = ddbMock.commandCalls(UpdateCommand, { Key: quotaKey(MERCHANT.id) }).length;

    // Act: with a key and without
    const keyed = await invoke(createV2, keyedEvent());
    const unkeyed = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }));

    // Assess
    expect([keyed.statusCode, unkeyed.statusCode]).toEqual([429, 429]);
    expect(ddbMock.commandCalls(UpdateCommand, { Key: quotaKey(MERCHANT.id) })).toHaveLength(takesBefore);
    expect([claims(), affiliateReads()]).toEqual([claimsBefore, readsBefore]);
  });

  it('answers 429 and puts no order when refused, whatever its reads found', async () => {
    // Prepare: refused, and the affiliate unknown (a 422 had the quota admitted it)
    stubOrderCreate({ affiliate: null });
    const quota = heldQuota(true);

    // Act
    const answer = invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }));
    // An affiliate not seen active is read twice: eventually consistently, then strongly.
    await vi.waitFor(() => expect(affiliateReads()).toBe(2));
    quota.answer();
    const response = await answer;

    // Assess
    expect(response.statusCode).toBe(429);
    expect(response.headers?.['retry-after']).toBeDefined();
    expect(orderPuts()).toBe(0);
  });
});
