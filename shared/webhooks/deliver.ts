import { type AttemptRecord, recordWebhookDelivery } from '#shared/db/entities/webhook-delivery';
import {
  DELIVERY_SLOTS,
  disableWebhookEndpoint,
  getWebhookEndpoint,
  markStreakNotified,
  recordEndpointOutcome,
  releaseDeliverySlot,
  takeDeliverySlot,
  type WebhookEndpointItem,
} from '#shared/db/entities/webhook-endpoint';
import type { TableRef } from '#shared/db/table-def';
import { logger } from '#shared/logger';
import { emitMetrics, METRIC } from '#shared/metrics';
import type { DeliveryMessage } from '#shared/queue/webhooks';
import { eventBody, subscribes, TEST_EVENT_TYPE } from './events';
import { sendEndpointNotice } from './notices';
import { type PostResult, postWebhook, type TargetPolicy } from './outbound';
import { retryAfterSeconds, STREAK_NOTICE_AFTER, streakDisables, waitBeforeNextAttempt } from './schedule';
import { openSecret } from './secret-box';
import { signDelivery } from './signing';

export type DeliverSettings = {
  db: TableRef;
  policy: TargetPolicy;
  timeoutMs: number;
  schedule: number[];
  /** Sends messages to the webhooks queue (a retry, a wait carried on); for each, whether SQS took it. */
  requeue: (messages: DeliveryMessage[]) => Promise<boolean[]>;
  now?: () => number;
  random?: () => number;
};

/** What became of one message: for logs, metrics and tests. */
export type DeliverOutcome = 'delivered' | 'retrying' | 'failed' | 'disabled' | 'held' | 'waiting' | 'dropped';

const iso = (ms: number) => new Date(ms).toISOString();

/** The secrets that sign a delivery at `now`: the current one, and the previous one during its 24 h overlap. */
const signingSecrets = async (merchantId: string, endpoint: WebhookEndpointItem, now: number) => {
  const secrets = [await openSecret(endpoint.secret_box, merchantId, endpoint.uuid)];
  const previousLive = endpoint.previous_secret_expires_at !== undefined && Date.parse(endpoint.previous_secret_expires_at) > now;
  if (endpoint.previous_secret_box && previousLive) secrets.push(await openSecret(endpoint.previous_secret_box, merchantId, endpoint.uuid));
  return secrets;
};

const requeueOrThrow = async (settings: DeliverSettings, message: DeliveryMessage) => {
  const [sent] = await settings.requeue([message]);
  // Thrown, the message is not deleted: SQS hands it over again after its visibility timeout.
  if (!sent) throw new Error('The webhooks queue refused a delivery message');
};

/**
 * One delivery message: when it is not yet due, sent on again; when its endpoint is gone or no
 * longer subscribes, dropped; when the endpoint is failing and not due for a retry, held until
 * then (the endpoint's `retry_at`); when all the endpoint's delivery slots are taken (a slow
 * endpoint), tried again in a moment. Otherwise one signed POST, recorded on the delivery, then
 * the endpoint's failure streak moved, and a retry queued on the schedule or the delivery given up.
 *
 * So a slow or failing endpoint holds at most DELIVERY_SLOTS deliverers (one while it fails),
 * and never another endpoint's messages. Throws only when the table or the queue failed: the
 * message then comes back and is redone (recording an attempt twice is harmless).
 */
export const deliver = async (message: DeliveryMessage, settings: DeliverSettings): Promise<DeliverOutcome> => {
  const now = settings.now?.() ?? Date.now();
  const random = settings.random ?? Math.random;
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid, event } = message;
  if (message.not_before !== undefined && Date.parse(message.not_before) > now + 1000) {
    await requeueOrThrow(settings, message);
    return 'waiting';
  }
  const endpoint = await getWebhookEndpoint(settings.db, merchantId, endpointUuid, true);
  if (!endpoint || !subscribes(endpoint, event.type)) return 'dropped';
  const json = JSON.stringify(event);
  const record = (attempt: AttemptRecord) =>
    recordWebhookDelivery(settings.db, merchantId, endpointUuid, { id: event.id, type: event.type, json }, attempt);
  const base = {
    attempt: message.attempt,
    at: iso(now),
    response_status: null,
    latency_ms: null,
    response_body: null,
    next_attempt_at: null,
  };
  // A test reaches a disabled endpoint too: the merchant checks the receiver before enabling it again.
  if (!endpoint.enabled && event.type !== TEST_EVENT_TYPE) {
    await record({ ...base, status: 'failed', error: 'The endpoint is disabled' });
    return 'failed';
  }
  if (endpoint.retry_at !== undefined && Date.parse(endpoint.retry_at) > now) {
    // Spread over a few seconds, so the held deliveries do not all arrive with the probe.
    await requeueOrThrow(settings, { ...message, not_before: iso(Date.parse(endpoint.retry_at) + Math.ceil(random() * 5000)) });
    return 'held';
  }
  const leaseUntil = iso(now + settings.timeoutMs + 5000);
  const free = [...Array(endpoint.failing_since ? 1 : DELIVERY_SLOTS).keys()].filter((slot) => {
    const held = endpoint[`slot_${slot}`];
    return typeof held !== 'string' || Date.parse(held) < now;
  });
  const slot =
    free.length === 0
      ? undefined
      : await takeDeliverySlot(settings.db, merchantId, endpointUuid, iso(now), leaseUntil, free[Math.floor(random() * free.length)]);
  if (slot === undefined) {
    await requeueOrThrow(settings, { ...message, not_before: iso(now + 1000 + Math.ceil(random() * 2000)) });
    return 'held';
  }

  let result: PostResult;
  try {
    const body = eventBody(event);
    const headers = signDelivery(await signingSecrets(merchantId, endpoint, now), event.id, new Date(now), body);
    result = await postWebhook(endpoint.url, headers, body, { timeoutMs: settings.timeoutMs, policy: settings.policy });
  } finally {
    await releaseDeliverySlot(settings.db, merchantId, endpointUuid, slot);
  }
  const answered = {
    response_status: result.status ?? null,
    latency_ms: result.latencyMs,
    response_body: result.body || null,
    error: result.error ?? null,
  };
  const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
  emitMetrics({ [ok ? METRIC.webhookDeliveries : METRIC.webhookFailures]: 1, [METRIC.webhookLatency]: result.latencyMs });
  if (ok) {
    await record({ ...base, ...answered, status: 'succeeded' });
    if (endpoint.failing_since !== undefined) await recordEndpointOutcome(settings.db, merchantId, endpointUuid, { ok: true });
    return 'delivered';
  }

  const disable = async (reason: string) => {
    await record({ ...base, ...answered, status: 'failed' });
    if (await disableWebhookEndpoint(settings.db, merchantId, endpointUuid, reason, iso(now))) {
      emitMetrics({ [METRIC.webhookEndpointsDisabled]: 1 });
      logger.warn('Webhook endpoint disabled', { merchant_id: merchantId, endpoint_uuid: endpointUuid, reason });
      await sendEndpointNotice(settings.db, merchantId, endpoint, { kind: 'disabled', reason });
    }
    return 'disabled' as const;
  };
  if (result.status === 410) return disable('it answered 410 Gone');

  const wait = waitBeforeNextAttempt(message.attempt, retryAfterSeconds(result.retryAfter, now), settings.schedule, random);
  const retryAt = iso(now + (wait ?? 0) * 1000);
  const streak = await recordEndpointOutcome(settings.db, merchantId, endpointUuid, { ok: false, at: iso(now), retryAt });
  if (!streak) return 'dropped';
  if (streakDisables(streak.failing_since ?? iso(now), streak.consecutive_failures ?? 1, now)) {
    return disable('its deliveries failed for 5 days or 20 attempts in a row');
  }
  if (
    (streak.consecutive_failures ?? 0) >= STREAK_NOTICE_AFTER &&
    (await markStreakNotified(settings.db, merchantId, endpointUuid, iso(now)))
  ) {
    await sendEndpointNotice(settings.db, merchantId, endpoint, { kind: 'failing', failures: streak.consecutive_failures ?? 0 });
  }
  if (wait === undefined) {
    await record({ ...base, ...answered, status: 'failed' });
    return 'failed';
  }
  await record({ ...base, ...answered, status: 'pending', next_attempt_at: retryAt });
  await requeueOrThrow(settings, { ...message, attempt: message.attempt + 1, not_before: retryAt });
  return 'retrying';
};
