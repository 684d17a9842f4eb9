import { functionTable } from '#shared/db/client';
import { webhookDeliveryPage } from '#shared/db/entities/webhook-delivery';
import {
  allWebhookEndpoints,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  putWebhookEndpoint,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '#shared/db/entities/webhook-endpoint';
import { withWriteRetry } from '#shared/db/retry';
import { TransactionRefused } from '#shared/db/transact';
import { busy, notFound, orNotFound, ruleRefused } from '#shared/errors';
import { type CursorInput, encodeCursor, openCursor } from '#shared/http/pagination';
import { type DeliveryMessage, onLaneOf, sendDeliveries as sendDeliveriesTo } from '#shared/queue/webhooks';
import type { RequestIdentity } from '#shared/request-identity';
import { WEBHOOK_MESSAGES, type WebhookCreateInput, type WebhookUpdateInput } from '#shared/schemas/webhooks';
import { isoNow } from '#shared/time';
import { testWebhookEvent, type WebhookEvent } from '#shared/webhooks/events';
import { DeliveriesNotQueued, NotSendable, replayDelivery, replayFailedDeliveries } from '#shared/webhooks/replay';
import { openSecret, sealSecret } from '#shared/webhooks/secret-box';
import { generateSecret } from '#shared/webhooks/signing';

import { toDeliveryResponse, toWebhookResponse } from './webhook-model';

// The webhook endpoints API: a secret is shown once, when it is made, and stored sealed (secret-box.ts).

const sendDeliveries = (messages: DeliveryMessage[]) => sendDeliveriesTo(functionTable, messages);

/** How long the replaced secret keeps signing beside the new one after a rotation. */
const PREVIOUS_SECRET_HOURS = 24;

const existing = (merchantId: string, uuid: string) => orNotFound(getWebhookEndpoint(functionTable, merchantId, uuid, true));

/** Creates an endpoint under the request identity's uuid; one that exists was made by an earlier run of this request and is answered. */
export const createWebhook = async (merchantId: string, input: WebhookCreateInput, identity: RequestIdentity) => {
  const uuid = identity.newUuid('webhook');
  const secret = generateSecret();
  const endpoint = {
    uuid,
    url: input.url,
    description: input.description ?? null,
    events: input.events ?? [],
    enabled: input.enabled ?? true,
    secret_box: await sealSecret(secret, merchantId, uuid),
  };
  const now = isoNow();
  const made = await withWriteRetry(async () => {
    try {
      await putWebhookEndpoint(functionTable, merchantId, endpoint, now);
      return true;
    } catch (error) {
      if (error instanceof TransactionRefused && error.refusedBy('endpoint')) return false;
      if (error instanceof TransactionRefused && error.refusedBy('count')) throw ruleRefused(WEBHOOK_MESSAGES.tooMany);
      throw error;
    }
  });
  if (made) return { ...toWebhookResponse({ ...endpoint, disabled_reason: null, created_at: now, updated_at: now }), secret };
  const stored = await existing(merchantId, uuid);
  return { ...toWebhookResponse(stored), secret: await openSecret(stored.secret_box, merchantId, uuid) };
};

export const listWebhooks = async (merchantId: string) => (await allWebhookEndpoints(functionTable, merchantId)).map(toWebhookResponse);

export const getWebhook = async (merchantId: string, uuid: string) => toWebhookResponse(await existing(merchantId, uuid));

/** Applies the changes; one that names none changes nothing, `updated_at` included. */
export const updateWebhook = async (merchantId: string, uuid: string, input: WebhookUpdateInput) => {
  if (Object.values(input).every((value) => value === undefined)) return getWebhook(merchantId, uuid);
  const updated = await withWriteRetry(() => updateWebhookEndpoint(functionTable, merchantId, uuid, input, isoNow()));
  if (!updated) throw notFound();
  return getWebhook(merchantId, uuid);
};

export const deleteWebhook = async (merchantId: string, uuid: string) => {
  let tries = 0;
  await withWriteRetry(async () => {
    tries++;
    try {
      await deleteWebhookEndpoint(functionTable, merchantId, uuid);
    } catch (error) {
      if (!(error instanceof TransactionRefused && error.refusedBy('endpoint'))) throw error;
      // Gone on a retry: the earlier try deleted it and its answer was lost.
      if (tries === 1) throw notFound();
    }
  });
};

/** A new secret, the current one signing beside it for a while; conditional on the endpoint as read (the new one found: applied). */
export const rotateWebhookSecretOf = async (merchantId: string, uuid: string) => {
  const secret = generateSecret();
  const box = await sealSecret(secret, merchantId, uuid);
  for (let attempt = 0; attempt < 3; attempt++) {
    const endpoint = await existing(merchantId, uuid);
    if (attempt > 0 && (await openSecret(endpoint.secret_box, merchantId, uuid)) === secret) {
      return { ...toWebhookResponse(endpoint), secret, previous_secret_expires_at: endpoint.previous_secrets?.[0]?.expires_at ?? null };
    }
    const now = new Date();
    const until = new Date(now.getTime() + PREVIOUS_SECRET_HOURS * 3600 * 1000).toISOString();
    if (await withWriteRetry(() => rotateWebhookSecret(functionTable, merchantId, endpoint, box, until, now.toISOString()))) {
      return { ...toWebhookResponse({ ...endpoint, updated_at: now.toISOString() }), secret, previous_secret_expires_at: until };
    }
  }
  throw busy();
};

const queued = (event: WebhookEvent) => ({ event_id: event.id, event_type: event.type });

/** Queues a `webhook.test` event to this endpoint, whatever its filter, even when it is disabled. */
export const testWebhook = async (merchantId: string, uuid: string) => {
  const endpoint = await existing(merchantId, uuid);
  const event = testWebhookEvent(uuid);
  const sent = await sendDeliveries([onLaneOf({ merchant_id: merchantId, endpoint_uuid: uuid, event, attempt: 1 }, endpoint)]);
  if (!sent.every(Boolean)) throw busy();
  return queued(event);
};

/** What a deliveries cursor is bound to: this stage's table, the merchant and the endpoint. */
const deliveriesScope = (merchantId: string, uuid: string) => `${functionTable.table}\n${merchantId}\nWEBHOOK_DELIVERIES#${uuid}`;

export const listDeliveries = async (merchantId: string, uuid: string, perPage: number, cursor: CursorInput | null | undefined) => {
  await existing(merchantId, uuid);
  const scope = deliveriesScope(merchantId, uuid);
  const page = await webhookDeliveryPage(functionTable, merchantId, uuid, perPage, openCursor(cursor, scope));
  return { deliveries: page.deliveries.map(toDeliveryResponse), next: page.next === undefined ? null : encodeCursor(page.next, scope) };
};

/** Runs a replay, answering 503 (retry) when the queue refused part of it. */
const replaying = <T>(replay: Promise<T>): Promise<T> =>
  replay.catch((error: unknown) => {
    if (error instanceof DeliveriesNotQueued) throw busy();
    if (error instanceof NotSendable) throw ruleRefused(error.message);
    throw error;
  });

/** Queues the event of one delivery again, as a first attempt (same `webhook-id`); to a disabled endpoint only a test. */
export const resendDelivery = async (merchantId: string, uuid: string, eventId: string) => {
  const endpoint = await existing(merchantId, uuid);
  const event = await replaying(replayDelivery(functionTable, sendDeliveries, merchantId, endpoint, eventId));
  if (!event) throw notFound();
  return queued(event);
};

/** Queues again every delivery to this endpoint that failed since `since`, oldest first, RECOVER_BATCH at a time. */
export const recoverDeliveries = async (merchantId: string, uuid: string, since: string) => {
  const endpoint = await existing(merchantId, uuid);
  // A disabled endpoint would have its deliveries recorded as failed again, sending nothing.
  if (!endpoint.enabled) throw ruleRefused(WEBHOOK_MESSAGES.disabled);
  return replaying(replayFailedDeliveries(functionTable, sendDeliveries, merchantId, endpoint, since));
};
