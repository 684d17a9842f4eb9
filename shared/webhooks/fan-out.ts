import { allWebhookEndpoints, endpointHeldUntil, type WebhookEndpointItem } from '#shared/db/entities/webhook-endpoint';
import type { TableRef } from '#shared/db/table-def';
import { errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { sendLists } from '#shared/queue/send-batch';
import type { DeliveryMessage } from '#shared/queue/webhooks';
import { subscribes, type WebhookEvent } from './events';

export type MerchantEvents = { merchantId: string; events: WebhookEvent[] };

/**
 * The change feed's webhook reaction for a batch of records: one delivery message per event and
 * enabled endpoint that subscribes to it, with one Query of the endpoints per merchant in the
 * batch (which also says which endpoints are held back: their messages are delayed until then).
 * A record is done when all its messages were sent; a merchant whose endpoints could not be
 * read fails its records (the feed reads them again). Sending twice is harmless: a delivery is
 * keyed by endpoint and event id.
 */
export const fanOutWebhookEvents = async (
  db: TableRef,
  records: readonly MerchantEvents[],
  send: (messages: DeliveryMessage[]) => Promise<boolean[]>,
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
  const lists = records.map(({ merchantId, events }) =>
    (endpoints.get(merchantId) ?? [])
      .filter((endpoint) => endpoint.enabled)
      .flatMap((endpoint) =>
        events
          .filter((event) => subscribes(endpoint, event.type))
          .map((event): DeliveryMessage => {
            // An endpoint that fails or hangs gets its new events delayed until it may be tried again, not bounced.
            const heldUntil = endpointHeldUntil(endpoint);
            const wait = heldUntil > now ? { not_before: new Date(heldUntil + Math.ceil(random() * 5000)).toISOString() } : {};
            return { merchant_id: merchantId, endpoint_uuid: endpoint.uuid, event, attempt: 1, ...wait };
          }),
      ),
  );
  const sent = await sendLists(lists, send);
  return records.map(({ merchantId }, index) => endpoints.get(merchantId) !== undefined && sent[index] === true);
};
