import { eventJsonOf, failedWebhookDeliveries, getWebhookDelivery, type WebhookDeliveryItem } from '#shared/db/entities/webhook-delivery';
import type { WebhookEndpointItem } from '#shared/db/entities/webhook-endpoint';
import type { TableRef } from '#shared/db/table-def';
import { type DeliveryMessage, onLaneOf, type SendDeliveries } from '#shared/queue/webhooks';
import { WEBHOOK_MESSAGES } from '#shared/schemas/webhooks';
import { subscribes, TEST_EVENT_TYPE, type WebhookEvent } from './events';

/** The most deliveries one recovery resends; `next_since` continues from there. */
export const RECOVER_BATCH = 1000;

/** The queue refused some of the messages: nothing is lost, the caller may simply try again. */
export class DeliveriesNotQueued extends Error {
  override name = 'DeliveriesNotQueued';
}

/** A first attempt of the delivery's event again, on its endpoint's lane. */
const redelivery = (merchantId: string, endpoint: Endpoint, delivery: WebhookDeliveryItem): DeliveryMessage =>
  onLaneOf(
    {
      merchant_id: merchantId,
      endpoint_uuid: delivery.endpoint_uuid,
      event: JSON.parse(eventJsonOf(delivery)) as WebhookEvent,
      attempt: 1,
    },
    endpoint,
  );

const queue = async (send: SendDeliveries, messages: DeliveryMessage[]) => {
  if (!(await send(messages)).every(Boolean)) throw new DeliveriesNotQueued('The webhooks queue refused some deliveries');
};

/** A delivery the deliverer would not send, so it is not queued; its message says why. */
export class NotSendable extends Error {}

/** A delivery of an event type the endpoint no longer subscribes to, which the deliverer would drop. */
export class NoLongerSubscribed extends NotSendable {
  override name = 'NoLongerSubscribed';
  constructor(readonly eventType: string) {
    super(`The endpoint no longer subscribes to ${eventType} events.`);
  }
}

/** The endpoint is disabled: the deliverer would record the delivery as failed (a test it sends). */
export class EndpointDisabled extends NotSendable {
  override name = 'EndpointDisabled';
  constructor() {
    super(WEBHOOK_MESSAGES.disabled);
  }
}

type Endpoint = Pick<WebhookEndpointItem, 'uuid' | 'events' | 'enabled' | 'fast_at' | 'slow_at'>;

/** Sends one recorded delivery again; undefined when the endpoint has no delivery of that event. */
export const replayDelivery = async (db: TableRef, send: SendDeliveries, merchantId: string, endpoint: Endpoint, eventId: string) => {
  const delivery = await getWebhookDelivery(db, merchantId, endpoint.uuid, eventId);
  if (!delivery) return undefined;
  if (!subscribes(endpoint, delivery.event_type)) throw new NoLongerSubscribed(delivery.event_type);
  if (!endpoint.enabled && delivery.event_type !== TEST_EVENT_TYPE) throw new EndpointDisabled();
  const message = redelivery(merchantId, endpoint, delivery);
  await queue(send, [message]);
  return message.event;
};

/** Sends again the endpoint's subscribed deliveries that failed since `since`, oldest first, RECOVER_BATCH at a time. */
export const replayFailedDeliveries = async (db: TableRef, send: SendDeliveries, merchantId: string, endpoint: Endpoint, since: string) => {
  const { deliveries, next } = await failedWebhookDeliveries(db, merchantId, endpoint.uuid, since, RECOVER_BATCH);
  const wanted = deliveries.filter((delivery) => subscribes(endpoint, delivery.event_type));
  await queue(
    send,
    wanted.map((delivery) => redelivery(merchantId, endpoint, delivery)),
  );
  return { since, queued: wanted.length, next_since: next ?? null };
};
