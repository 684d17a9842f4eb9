import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { recordWebhookDelivery } from '#shared/db/entities/webhook-delivery';
import type { DeliveryMessage } from '#shared/queue/webhooks';
import { EndpointDisabled, NoLongerSubscribed, replayDelivery, replayFailedDeliveries } from '#shared/webhooks/replay';
import { ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT, MERCHANT_PK } from './support/fixtures';

const db = { ddb: ddbMock as never, table: 'unit-table' };
/** An endpoint subscribed to every event type. */
const ENDPOINT = { uuid: 'ep', events: [], enabled: true };
const EVENT = {
  id: 'evt_1',
  type: 'order.created',
  timestamp: '2026-03-01T10:00:00.000Z',
  data: { order: { order_rows: [{ product_name: 'Zelt 😀' }] } },
};
const ATTEMPT = {
  status: 'succeeded',
  response_status: 204,
  latency_ms: 5,
  response_body: null,
  error: null,
  next_attempt_at: null,
  attempt: 1,
  at: '2026-03-01T10:00:01.000Z',
} as const;

const storedDelivery = (event: unknown) => ({
  pk: MERCHANT_PK,
  sk: 'WHDELIVERY#ep#evt_1',
  endpoint_uuid: 'ep',
  event_id: EVENT.id,
  event_type: EVENT.type,
  event,
  status: 'succeeded',
  attempts: 1,
  last_attempt_at: ATTEMPT.at,
  response_status: 204,
  latency_ms: 5,
  response_body: null,
  error: null,
  next_attempt_at: null,
  created_at: ATTEMPT.at,
  updated_at: ATTEMPT.at,
});

beforeEach(() => {
  resetAwsMocks();
  ddbMock.on(UpdateCommand).resolves({});
});

describe('a recorded webhook delivery', () => {
  it('keeps its event deflated, and sends the same event again when resent, as it does one kept as text before', async () => {
    // Prepare: the delivery as recorded now, and one recorded before events were deflated
    await recordWebhookDelivery(db, MERCHANT.id, 'ep', { id: EVENT.id, type: EVENT.type, json: JSON.stringify(EVENT) }, ATTEMPT);
    const packed = ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input.ExpressionAttributeValues?.[':event'] as Uint8Array;
    const sent: DeliveryMessage[] = [];
    const send = async (messages: DeliveryMessage[]) => {
      sent.push(...messages);
      return messages.map(() => true);
    };

    // Act
    ddbMock
      .on(GetCommand)
      .resolvesOnce({ Item: storedDelivery(packed) })
      .resolvesOnce({ Item: storedDelivery(JSON.stringify(EVENT)) });
    const now = await replayDelivery(db, send, MERCHANT.id, ENDPOINT, EVENT.id);
    const before = await replayDelivery(db, send, MERCHANT.id, ENDPOINT, EVENT.id);

    // Assess
    expect(packed).toBeInstanceOf(Uint8Array);
    expect(packed.length).toBeLessThan(JSON.stringify(EVENT).length);
    expect([now, before]).toEqual([EVENT, EVENT]);
    expect(sent.map((message) => message.event)).toEqual([EVENT, EVENT]);
  });
});

describe('a delivery sent again', () => {
  it("goes on its endpoint's lane: the slow lane until the endpoint has answered promptly, the other once it has", async () => {
    // Prepare
    ddbMock.on(GetCommand).resolves({ Item: storedDelivery(JSON.stringify(EVENT)) });
    const sent: DeliveryMessage[] = [];
    const send = async (messages: DeliveryMessage[]) => {
      sent.push(...messages);
      return messages.map(() => true);
    };

    // Act
    await replayDelivery(db, send, MERCHANT.id, ENDPOINT, EVENT.id);
    await replayDelivery(db, send, MERCHANT.id, { ...ENDPOINT, fast_at: '2026-03-01T10:00:01.000Z' }, EVENT.id);

    // Assess
    expect(sent.map((message) => message.slow ?? false)).toEqual([true, false]);
  });
});

describe('sending deliveries again to an endpoint that narrowed its subscription', () => {
  const collect = () => {
    const sent: DeliveryMessage[] = [];
    return { sent, send: async (messages: DeliveryMessage[]) => (sent.push(...messages), messages.map(() => true)) };
  };
  const ordersCancelledOnly = { uuid: 'ep', events: ['order.cancelled'], enabled: true };

  it('refuses to resend a delivery of a type the endpoint no longer subscribes to, which the deliverer would drop', async () => {
    // Prepare
    ddbMock.on(GetCommand).resolves({ Item: storedDelivery(JSON.stringify(EVENT)) });
    const { sent, send } = collect();

    // Act
    const resent = replayDelivery(db, send, MERCHANT.id, ordersCancelledOnly, EVENT.id);

    // Assess
    await expect(resent).rejects.toBeInstanceOf(NoLongerSubscribed);
    expect(sent).toEqual([]);
  });

  it('refuses to resend to a disabled endpoint, which would record it as failed, but resends a test, which it would send', async () => {
    // Prepare
    const disabled = { ...ENDPOINT, enabled: false };
    const test = { ...EVENT, id: 'evt_test_1', type: 'webhook.test' };
    ddbMock.on(GetCommand).resolves({ Item: storedDelivery(JSON.stringify(EVENT)) });
    const { sent, send } = collect();

    // Act
    const resent = replayDelivery(db, send, MERCHANT.id, disabled, EVENT.id);
    await expect(resent).rejects.toBeInstanceOf(EndpointDisabled);
    ddbMock.on(GetCommand).resolves({ Item: { ...storedDelivery(JSON.stringify(test)), event_id: test.id, event_type: test.type } });
    const resentTest = await replayDelivery(db, send, MERCHANT.id, disabled, test.id);

    // Assess
    expect(resentTest?.type).toBe('webhook.test');
    expect(sent.map((message) => message.event.type)).toEqual(['webhook.test']);
  });

  it('passes over, uncounted, the failed deliveries of such a type when recovering', async () => {
    // Prepare: the failed list holds one order.created delivery
    ddbMock.on(QueryCommand).resolves({ Items: [{ ...storedDelivery(JSON.stringify(EVENT)), status: 'failed' }] });
    const { sent, send } = collect();

    // Act
    const recovered = await replayFailedDeliveries(db, send, MERCHANT.id, ordersCancelledOnly, '2026-02-20T00:00:00.000Z');

    // Assess
    expect(recovered).toEqual({ since: '2026-02-20T00:00:00.000Z', queued: 0, next_since: null });
    expect(sent).toEqual([]);
  });
});
