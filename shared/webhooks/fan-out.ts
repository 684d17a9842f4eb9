import { DISABLED_OUTCOME, recordWebhookDelivery } from '#shared/db/entities/webhook-delivery';
import { allWebhookEndpoints, endpointHeldUntil, type WebhookEndpointItem } from '#shared/db/entities/webhook-endpoint';
import type { TableRef } from '#shared/db/table-def';
import { errorName } from '#shared/errors';
import { groupBy } from '#shared/group-by';
import { logger } from '#shared/logger';
import { sendLists } from '#shared/queue/send-batch';
import { type DeliveryMessage, onLaneOf, type SendDeliveries } from '#shared/queue/webhooks';
import { recoverableSince } from '#shared/schemas/webhooks';
import { subscribes, type WebhookEvent } from './events';
import { keeper, parkWhileHeld } from './park';

export type MerchantEvents = { merchantId: string; events: WebhookEvent[] };

type Delivery = { endpoint: WebhookEndpointItem; message: DeliveryMessage };

/** One delivery per event and enabled, subscribed endpoint, parked or delayed while held; idempotent (docs/webhooks.md#how-it-works). */
export const fanOutWebhookEvents = async (
  db: TableRef,
  records: readonly MerchantEvents[],
  send: SendDeliveries,
  now = Date.now(),
  random = Math.random,
): Promise<boolean[]> => {
  const merchants = [...new Set(records.map(({ merchantId }) => merchantId))];
  const endpoints = new Map<string, WebhookEndpointItem[] | undefined>();
  await Promise.all(
    merchants.map(async (merchantId) => {
      try {
        endpoints.set(merchantId, await allWebhookEndpoints(db, merchantId));
      } catch (error) {
        logger.warn('Webhook endpoints not read; the feed will retry', { merchant_id: merchantId, error_name: errorName(error) });
        endpoints.set(merchantId, undefined);
      }
    }),
  );
  const missed = await recordMissedWhileDisabled(db, records, endpoints, now);
  const planned = records.map(({ merchantId, events }) =>
    (endpoints.get(merchantId) ?? [])
      .filter((endpoint) => endpoint.enabled)
      .flatMap((endpoint) =>
        events
          .filter((event) => subscribes(endpoint, event.type))
          .map(
            (event): Delivery => ({
              endpoint,
              message: onLaneOf({ merchant_id: merchantId, endpoint_uuid: endpoint.uuid, event, attempt: 1 }, endpoint),
            }),
          ),
      ),
  );
  // Each merchant's endpoints were read once, so an endpoint item stands for its endpoint.
  const held = groupBy(
    planned.flat().filter(({ endpoint }) => endpointHeldUntil(endpoint) > now),
    ({ endpoint }) => endpoint,
  );
  const outcomes = new Map(
    await Promise.all(
      [...held].map(async ([endpoint, deliveries]) => {
        const heldUntil = endpointHeldUntil(endpoint);
        const messages = deliveries.map(({ message }) => message);
        const outcome = parksDuring(endpoint, now) ? await parkHeld(db, endpoint, heldUntil, messages, send, now) : 'delayed';
        return [endpoint, { heldUntil, outcome }] as const;
      }),
    ),
  );
  const lists = planned.map((deliveries) =>
    deliveries.flatMap(({ endpoint, message }): DeliveryMessage[] => {
      const hold = outcomes.get(endpoint);
      if (hold?.outcome === 'parked') return [];
      // Not parked while still held: delayed until it may be tried again (and a moment more), not bounced.
      if (hold?.outcome === 'delayed')
        return [{ ...message, not_before: new Date(hold.heldUntil + Math.ceil(random() * 5000)).toISOString() }];
      return [message];
    }),
  );
  const sent = await sendLists(lists, send);
  return records.map(({ merchantId }, index) => endpoints.get(merchantId) !== undefined && sent[index] === true && missed[index] === true);
};

/** Whether the service disabled the endpoint (410 Gone, a failure streak) recently enough for recover to reach what it misses. */
const missesRecoverably = (endpoint: WebhookEndpointItem, now: number) =>
  !endpoint.enabled &&
  endpoint.disabled_reason !== null &&
  endpoint.disabled_at !== undefined &&
  Date.parse(endpoint.disabled_at) >= Date.parse(recoverableSince(now));

/** Events for an endpoint the service disabled are recorded as failed, for recover to send; false where that failed (the feed retries). */
const recordMissedWhileDisabled = async (
  db: TableRef,
  records: readonly MerchantEvents[],
  endpoints: ReadonlyMap<string, WebhookEndpointItem[] | undefined>,
  now: number,
): Promise<boolean[]> => {
  const at = new Date(now).toISOString();
  return Promise.all(
    records.map(async ({ merchantId, events }) => {
      const missing = (endpoints.get(merchantId) ?? [])
        .filter((endpoint) => missesRecoverably(endpoint, now))
        .flatMap((endpoint) => events.filter((event) => subscribes(endpoint, event.type)).map((event) => ({ endpoint, event })));
      try {
        await Promise.all(
          missing.map(({ endpoint, event }) =>
            recordWebhookDelivery(
              db,
              merchantId,
              endpoint.uuid,
              { id: event.id, type: event.type, json: JSON.stringify(event) },
              { ...DISABLED_OUTCOME, attempt: 1, at },
              // A record read again after the event was delivered (before the disabling) leaves that delivery as it is.
              { onlyNew: true },
            ),
          ),
        );
        return true;
      } catch (error) {
        logger.warn('A missed webhook delivery of a disabled endpoint not recorded; the feed will retry', {
          merchant_id: merchantId,
          error_name: errorName(error),
        });
        return false;
      }
    }),
  );
};

/** A hold whose new deliveries are parked: a slow mark or a rest over SHORT_HOLD_MS (a shorter rest's arrive at its end, each a probe). */
const parksDuring = (endpoint: WebhookEndpointItem, now: number) =>
  (endpoint.slow_until !== undefined && Date.parse(endpoint.slow_until) > now) ||
  (endpoint.retry_at !== undefined && Date.parse(endpoint.retry_at) - now > SHORT_HOLD_MS);

/** The longest rest whose new deliveries are sent delayed to its end rather than parked. */
const SHORT_HOLD_MS = 60_000;

/** Parks a held endpoint's deliveries, its keeper first: `ended` when the hold ended meanwhile, `delayed` when table or queue failed. */
const parkHeld = async (
  db: TableRef,
  endpoint: WebhookEndpointItem,
  heldUntil: number,
  messages: DeliveryMessage[],
  send: SendDeliveries,
  now: number,
): Promise<'parked' | 'ended' | 'delayed'> => {
  const [first] = messages;
  const merchantId = first?.merchant_id ?? '';
  try {
    if (first && endpoint.waiting === undefined && !(await send([keeper(first, heldUntil)]))[0]) return 'delayed';
    // Filed under the event's time, so a record read again parks the same items again.
    const parks = messages.map((message) => ({ message, at: Date.parse(message.event.timestamp) || now }));
    return (await parkWhileHeld(db, merchantId, endpoint.uuid, parks, now)) ? 'parked' : 'ended';
  } catch (error) {
    logger.warn('Deliveries of a held webhook endpoint not parked; they are sent delayed', {
      merchant_id: merchantId,
      endpoint_uuid: endpoint.uuid,
      error_name: errorName(error),
    });
    return 'delayed';
  }
};
