import { webhookDeliveryPage } from '#shared/db/entities/webhook-delivery';
import { allWebhookEndpoints, getWebhookEndpoint } from '#shared/db/entities/webhook-endpoint';
import { parkedDeliveryCount } from '#shared/db/entities/webhook-waiting';
import { toDeliveryResponse, toWebhookResponse } from '#shared/domain/webhook-model';
import type { SendDeliveries } from '#shared/queue/webhooks';
import { recoverableSince } from '#shared/schemas/webhooks';
import { NotSendable, replayDelivery, replayFailedDeliveries } from '#shared/webhooks/replay';
import { AdminError, requireMerchant } from './operations';
import type { Store } from './store';

// `npm run admin -- webhooks list|deliveries|replay`: the API's reads and replays, on any stage's table.

const requireEndpoint = async (store: Store, merchantId: string, endpointUuid: string) => {
  await requireMerchant(store, merchantId);
  const endpoint = await getWebhookEndpoint(store, merchantId, endpointUuid, true);
  if (!endpoint) throw new AdminError(`merchant ${merchantId} has no webhook endpoint ${endpointUuid}`);
  return endpoint;
};

/** The most parked deliveries counted per endpoint in a listing. */
const PARKED_COUNTED = 10_000;

/** Every endpoint of the merchant, as the API shows them (never their secrets), with how many deliveries are parked for it. */
export const listWebhookEndpoints = async (store: Store, merchantId: string) => {
  await requireMerchant(store, merchantId);
  const endpoints = await allWebhookEndpoints(store, merchantId);
  return {
    webhooks: await Promise.all(
      endpoints.map(async (endpoint) => ({
        ...toWebhookResponse(endpoint),
        parked_deliveries: await parkedDeliveryCount(store, merchantId, PARKED_COUNTED, endpoint.uuid),
      })),
    ),
  };
};

/** The endpoint's latest `limit` deliveries, newest first. */
export const listWebhookDeliveries = async (store: Store, options: { merchantId: string; endpointUuid: string; limit: number }) => {
  const endpoint = await requireEndpoint(store, options.merchantId, options.endpointUuid);
  const page = await webhookDeliveryPage(store, options.merchantId, endpoint.uuid, options.limit);
  return { webhook: toWebhookResponse(endpoint), deliveries: page.deliveries.map(toDeliveryResponse), next_cursor: page.next ?? null };
};

/** Sends one delivery again (`eventId`), or every failed one since `since` (default: as far back as kept, 14 days). */
export const replayWebhookDeliveries = async (
  store: Store,
  send: SendDeliveries,
  options: { merchantId: string; endpointUuid: string; eventId?: string; since?: string },
) => {
  const endpoint = await requireEndpoint(store, options.merchantId, options.endpointUuid);
  if (options.eventId !== undefined) {
    const event = await replayDelivery(store, send, options.merchantId, endpoint, options.eventId).catch((error: unknown) => {
      throw error instanceof NotSendable ? new AdminError(error.message) : error;
    });
    if (!event) throw new AdminError(`endpoint ${options.endpointUuid} has no delivery of event ${options.eventId}`);
    return { queued: 1, event_id: event.id };
  }
  const since = options.since ?? recoverableSince();
  if (Number.isNaN(Date.parse(since))) throw new AdminError('--since must be an ISO 8601 time');
  return replayFailedDeliveries(store, send, options.merchantId, endpoint, new Date(since).toISOString());
};
