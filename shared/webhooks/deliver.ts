import { type AttemptRecord, recordWebhookDelivery } from '#shared/db/entities/webhook-delivery';
import {
  claimDelivery,
  disableWebhookEndpoint,
  endpointHeldUntil,
  finishDelivery,
  markEndpointSlow,
  markStreakNotified,
  type WebhookEndpointItem,
} from '#shared/db/entities/webhook-endpoint';
import type { TableRef } from '#shared/db/table-def';
import { errorName } from '#shared/errors';
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

/** How long a delivery may go unanswered before its endpoint counts as slow: 2 s (less for a shorter timeout). */
const slowAfterMs = (timeoutMs: number) => Math.min(2000, timeoutMs / 2);

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
 * One delivery message. Not yet due: sent on again. Otherwise one claim on the endpoint
 * (endpoint-entity claimDelivery: an UpdateItem that also reads it): gone or no longer
 * subscribing, dropped; disabled, recorded as failed; failing and not due for a retry, held until
 * its `retry_at`; all its deliveries in flight (a slow endpoint), tried again in a moment.
 * Claimed: one signed POST, recorded on the delivery, the claim given back with the outcome (the
 * failure streak moved), and a retry queued on the schedule or the delivery given up.
 *
 * So a slow or failing endpoint holds at most DELIVERY_SLOTS deliverers (one while it fails), and
 * never another endpoint's messages. Throws only when the table or the queue failed: the message
 * then comes back and is redone (recording an attempt twice is harmless).
 */
export const deliver = async (message: DeliveryMessage, settings: DeliverSettings): Promise<DeliverOutcome> => {
  const now = settings.now?.() ?? Date.now();
  const random = settings.random ?? Math.random;
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid, event } = message;
  if (message.not_before !== undefined && Date.parse(message.not_before) > now + 1000) {
    await requeueOrThrow(settings, message);
    return 'waiting';
  }
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
  const claim = await claimDelivery(settings.db, merchantId, endpointUuid, now, { anyState: event.type === TEST_EVENT_TYPE });
  if (claim.kind === 'missing' || !subscribes(claim.endpoint, event.type)) {
    if (claim.kind === 'claimed') await finishDelivery(settings.db, merchantId, endpointUuid, { result: 'released' });
    return 'dropped';
  }
  const { endpoint } = claim;
  if (claim.kind === 'refused') {
    if (!endpoint.enabled && event.type !== TEST_EVENT_TYPE) {
      await record({ ...base, status: 'failed', error: 'The endpoint is disabled' });
      return 'failed';
    }
    const heldUntil = endpointHeldUntil(endpoint);
    if (heldUntil > now) {
      // Held until the endpoint's retry time (or its slow delivery's timeout), spread over a few seconds so they do not all arrive with its probe.
      await requeueOrThrow(settings, { ...message, not_before: iso(heldUntil + Math.ceil(random() * 5000)) });
      return 'held';
    }
    // All its deliveries in flight (a slow endpoint, or a burst): again in 1 s, 2 s, 4 s... (at most the
    // delivery timeout, jittered), so a hanging endpoint's backlog waits instead of spinning.
    const holds = (message.holds ?? 0) + 1;
    const wait = Math.min(settings.timeoutMs, 1000 * 2 ** (holds - 1)) * (0.5 + random());
    await requeueOrThrow(settings, { ...message, holds, not_before: iso(now + wait) });
    return 'held';
  }

  let result: PostResult;
  try {
    const body = eventBody(event);
    const headers = signDelivery(await signingSecrets(merchantId, endpoint, now), event.id, new Date(now), body);
    // Unanswered after a moment: the endpoint's other deliveries wait for this one's timeout rather than pile up.
    const slow = setTimeout(() => {
      markEndpointSlow(settings.db, merchantId, endpointUuid, iso(Date.now()), iso(now + settings.timeoutMs)).catch((error: unknown) =>
        logger.warn('Could not mark a slow webhook endpoint', { endpoint_uuid: endpointUuid, error_name: errorName(error) }),
      );
    }, slowAfterMs(settings.timeoutMs));
    result = await postWebhook(endpoint.url, headers, body, { timeoutMs: settings.timeoutMs, policy: settings.policy }).finally(() =>
      clearTimeout(slow),
    );
  } catch (error) {
    // Nothing was sent (the secret could not be opened): give the claim back, and let the message come back.
    await finishDelivery(settings.db, merchantId, endpointUuid, { result: 'released' });
    throw error;
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
    await Promise.all([
      record({ ...base, ...answered, status: 'succeeded' }),
      finishDelivery(settings.db, merchantId, endpointUuid, { result: 'delivered', wasFailing: endpoint.failing_since !== undefined }),
    ]);
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

  const wait = waitBeforeNextAttempt(message.attempt, retryAfterSeconds(result.retryAfter, now), settings.schedule, random);
  const retryAt = iso(now + (wait ?? 0) * 1000);
  const streak = await finishDelivery(settings.db, merchantId, endpointUuid, {
    result: 'failed',
    at: iso(now),
    retryAt,
    answered: result.status !== undefined,
  });
  if (!streak) return 'dropped';
  if (result.status === 410) return disable('it answered 410 Gone');
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
  const { holds: _holds, ...next } = message;
  await requeueOrThrow(settings, { ...next, attempt: message.attempt + 1, not_before: retryAt });
  return 'retrying';
};
