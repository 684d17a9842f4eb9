import { GetCommand, PutCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { padSeq } from '#shared/db/entities/base';
import { quotaKey } from '#shared/db/entities/quota';
import { apiEvent, invoke } from './support/api';
import { conditionFailed, ddbMock, resetAwsMocks } from './support/aws';
import { AFFILIATE_KEY, MERCHANT, orderBody, stubAuth, stubOrderCreate, TOKENS } from './support/fixtures';

// The quota is enforced here (the other handler tests switch it off): loaded after the switch.
vi.stubEnv('QUOTA_ENFORCEMENT', 'on');
const { handler: createV2 } = await import('#functions/orders/create');

/** The merchant's quota take, held until `answer()`; admitted then unless `refuse`. */
const heldQuota = (refuse = false) => {
  let answer = () => {};
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  ddbMock.on(UpdateCommand, { Key: quotaKey(MERCHANT.id) }).callsFake(async (input: UpdateCommandInput) => {
    await answered;
    // Refused: the bucket stands a minute ahead (no token left); admitted: the take's own end.
    if (refuse) throw conditionFailed(marshall({ tat_us: Date.now() * 1000 + 60_000_000, orders_seq: 6 }));
    // A create's take also takes its order sequence number.
    return { Attributes: { tat_us: input.ExpressionAttributeValues?.[':end'], orders_seq: 7 } };
  });
  return { answer };
};

const affiliateReads = () => ddbMock.commandCalls(GetCommand, { Key: AFFILIATE_KEY }).length;
const orderPuts = () => ddbMock.commandCalls(PutCommand).length;

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
  stubOrderCreate();
});

describe('a create and the merchant quota', () => {
  it('reads beside the quota decision without an Idempotency-Key, and puts the order only once admitted', async () => {
    // Prepare
    const quota = heldQuota();

    // Act: the decision is held back until the create's first reads are out
    const answer = invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }));
    await vi.waitFor(() => expect(affiliateReads()).toBe(1));
    const putsBeforeDecision = orderPuts();
    quota.answer();
    const response = await answer;

    // Assess
    expect(putsBeforeDecision).toBe(0);
    expect(response.statusCode).toBe(201);
    expect(orderPuts()).toBe(1);
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

  it('takes the decision before anything else with an Idempotency-Key, whose claim must come after it', async () => {
    // Prepare
    const quota = heldQuota();

    // Act
    const answer = invoke(
      createV2,
      apiEvent('orders-create', { token: TOKENS.live, body: orderBody(), headers: { 'Idempotency-Key': 'key-1' } }),
    );
    await vi.waitFor(() => expect(ddbMock.commandCalls(UpdateCommand, { Key: quotaKey(MERCHANT.id) })).toHaveLength(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const readsBeforeDecision = affiliateReads();
    quota.answer();
    await answer;

    // Assess
    expect(readsBeforeDecision).toBe(0);
    expect(affiliateReads()).toBe(1);
  });

  it('answers 429 and puts no order when refused, whatever its reads found', async () => {
    // Prepare: refused, and the affiliate unknown (a 422 had the quota admitted it)
    stubOrderCreate({ affiliate: null });
    const quota = heldQuota(true);

    // Act
    const answer = invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }));
    await vi.waitFor(() => expect(affiliateReads()).toBe(1));
    quota.answer();
    const response = await answer;

    // Assess
    expect(response.statusCode).toBe(429);
    expect(response.headers?.['retry-after']).toBeDefined();
    expect(orderPuts()).toBe(0);
  });
});
