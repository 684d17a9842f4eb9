import { type AttemptRecord, recordWebhookDelivery } from '#shared/db/entities/webhook-delivery';
import {
  answersPromptly,
  claimDelivery,
  type DeliveryClaim,
  disableWebhookEndpoint,
  endpointHeldUntil,
  finishDelivery,
  markEndpointSlow,
  markStreakNotified,
  signingSecretBoxes,
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
import { endpointRestAfterFailures, retryAfterSeconds, STREAK_NOTICE_AFTER, streakDisables, waitBeforeNextAttempt } from './schedule';
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

/** One message being delivered: what every step reads. */
type Attempt = {
  message: DeliveryMessage;
  settings: DeliverSettings;
  now: number;
  random: () => number;
  /** Records this attempt on the delivery, on top of what every record of it carries. */
  record: (fields: Omit<AttemptRecord, 'attempt' | 'at'>) => Promise<void>;
};

const UNANSWERED = { response_status: null, latency_ms: null, response_body: null, next_attempt_at: null } as const;

const requeueOrThrow = async (settings: DeliverSettings, message: DeliveryMessage) => {
  const [sent] = await settings.requeue([message]);
  // Thrown, the message is not deleted: SQS hands it over again after its visibility timeout.
  if (!sent) throw new Error('The webhooks queue refused a delivery message');
};

/**
 * One delivery message: not yet due, sent on again; else one claim on the endpoint (claim), then
 * one signed POST (send), its outcome recorded and the claim given back (recordSuccess,
 * recordFailure), and the next attempt queued on the endpoint's schedule or the delivery given up.
 *
 * So a slow or failing endpoint holds at most its slots of the deliverers (one while it fails),
 * and never another endpoint's messages. Throws only when the table or the queue failed: the
 * message then comes back and is redone (recording an attempt twice is harmless).
 */
export const deliver = async (message: DeliveryMessage, settings: DeliverSettings): Promise<DeliverOutcome> => {
  const now = settings.now?.() ?? Date.now();
  if (message.not_before !== undefined && Date.parse(message.not_before) > now + 1000) {
    await requeueOrThrow(settings, message);
    return 'waiting';
  }
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid, event } = message;
  const json = JSON.stringify(event);
  const attempt: Attempt = {
    message,
    settings,
    now,
    random: settings.random ?? Math.random,
    record: (fields) =>
      recordWebhookDelivery(
        settings.db,
        merchantId,
        endpointUuid,
        { id: event.id, type: event.type, json },
        { ...fields, attempt: message.attempt, at: iso(now) },
      ),
  };
  const claimed = await claim(attempt);
  if (typeof claimed === 'string') return claimed;
  const result = await send(attempt, claimed);
  const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
  emitMetrics({ [ok ? METRIC.webhookDeliveries : METRIC.webhookFailures]: 1, [METRIC.webhookLatency]: result.latencyMs });
  return ok ? recordSuccess(attempt, claimed, result) : recordFailure(attempt, claimed, result);
};

/**
 * Claims one of the endpoint's delivery slots (endpoint-entity claimDelivery: an UpdateItem that
 * also reads it), or says what became of the message: gone or no longer subscribing, dropped;
 * disabled, recorded as failed; held back (a failure streak, a slow delivery, all slots taken),
 * sent on to wait.
 */
const claim = async (attempt: Attempt): Promise<WebhookEndpointItem | DeliverOutcome> => {
  const { message, settings, now } = attempt;
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid, event } = message;
  // A test reaches a disabled endpoint too: the merchant checks the receiver before enabling it again.
  const claimed = await claimDelivery(settings.db, merchantId, endpointUuid, now, { anyState: event.type === TEST_EVENT_TYPE });
  if (claimed.kind === 'missing' || !subscribes(claimed.endpoint, event.type)) {
    if (claimed.kind === 'claimed') await finishDelivery(settings.db, merchantId, endpointUuid, { result: 'released' });
    return 'dropped';
  }
  if (claimed.kind === 'refused') return holdRefused(attempt, claimed);
  return claimed.endpoint;
};

const HOLD_SPREAD_MS = 5000;
const MAX_HOLD_SPREAD_MS = 60_000;

/** A refused claim: recorded as failed when the endpoint is disabled, else the message waits. */
const holdRefused = async (attempt: Attempt, refused: Extract<DeliveryClaim, { kind: 'refused' }>): Promise<DeliverOutcome> => {
  const { message, settings, now, random } = attempt;
  const { endpoint } = refused;
  if (!endpoint.enabled && message.event.type !== TEST_EVENT_TYPE) {
    await attempt.record({ ...UNANSWERED, status: 'failed', error: 'The endpoint is disabled' });
    return 'failed';
  }
  const heldUntil = endpointHeldUntil(endpoint);
  const holds = (message.holds ?? 0) + 1;
  if (heldUntil > now) {
    // Held until the endpoint's retry time (or its slow delivery's timeout), spread so they do not all
    // arrive with its probe: over 5 s, and behind a delivery that keeps hanging (no failure streak to
    // rest on) over 10 s, 20 s... up to a minute as the message is held again.
    const spread = endpoint.failing_since === undefined ? Math.min(MAX_HOLD_SPREAD_MS, HOLD_SPREAD_MS * 2 ** (holds - 1)) : HOLD_SPREAD_MS;
    await requeueOrThrow(settings, { ...message, holds, not_before: iso(heldUntil + Math.ceil(random() * spread)) });
    return 'held';
  }
  // All its slots in flight. An endpoint that answers promptly (a burst): again in 1 s, 2 s, 4 s...
  // (at most the delivery timeout); any other (new, slow, hanging, failing), whose few slots free up
  // only as its deliveries end: after about one delivery timeout. Jittered; so a hanging endpoint's
  // backlog waits instead of spinning through the deliverers and the queue.
  const backOff = answersPromptly(endpoint, now) ? Math.min(settings.timeoutMs, 1000 * 2 ** (holds - 1)) : settings.timeoutMs;
  const wait = backOff * (0.5 + random());
  await requeueOrThrow(settings, { ...message, holds, not_before: iso(now + wait) });
  return 'held';
};

/**
 * The signed POST, signed by every secret in effect (the current one and each one replaced within
 * its overlap). Unanswered after a moment, the endpoint is marked slow: its other deliveries wait
 * for this one's timeout rather than pile up.
 */
const send = async ({ message, settings, now }: Attempt, endpoint: WebhookEndpointItem): Promise<PostResult> => {
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid, event } = message;
  try {
    const body = eventBody(event);
    const secrets = await Promise.all(signingSecretBoxes(endpoint, now).map((box) => openSecret(box, merchantId, endpointUuid)));
    const headers = signDelivery(secrets, event.id, new Date(now), body);
    const slow = setTimeout(() => {
      markEndpointSlow(settings.db, merchantId, endpointUuid, iso(Date.now()), iso(now + settings.timeoutMs)).catch((error: unknown) =>
        logger.warn('Could not mark a slow webhook endpoint', { endpoint_uuid: endpointUuid, error_name: errorName(error) }),
      );
    }, slowAfterMs(settings.timeoutMs));
    return await postWebhook(endpoint.url, headers, body, { timeoutMs: settings.timeoutMs, policy: settings.policy }).finally(() =>
      clearTimeout(slow),
    );
  } catch (error) {
    // Nothing was sent (the secret could not be opened): give the claim back, and let the message come back.
    await finishDelivery(settings.db, merchantId, endpointUuid, { result: 'released' });
    throw error;
  }
};

const answeredFields = (result: PostResult) => ({
  response_status: result.status ?? null,
  latency_ms: result.latencyMs,
  response_body: result.body || null,
  error: result.error ?? null,
});

/** A 2xx: recorded, the claim given back, the failure streak ended, a prompt answer noted. */
const recordSuccess = async ({ message, settings, now, record }: Attempt, endpoint: WebhookEndpointItem, result: PostResult) => {
  const fast = result.latencyMs < slowAfterMs(settings.timeoutMs);
  await Promise.all([
    record({ ...answeredFields(result), next_attempt_at: null, status: 'succeeded' }),
    finishDelivery(settings.db, message.merchant_id, message.endpoint_uuid, {
      result: 'delivered',
      wasFailing: endpoint.failing_since !== undefined,
      ...(fast ? { fastAt: iso(now) } : {}),
    }),
  ]);
  return 'delivered' as const;
};

/**
 * Anything else: the endpoint's failure streak moved and the endpoint rested on the schedule by
 * its failures in a row (so its backlog waits behind one probe at a time), then this delivery
 * disabled (410 Gone, a streak of 5 days), given up (its own schedule exhausted) or retried no
 * sooner than the endpoint's next probe.
 */
const recordFailure = async (attempt: Attempt, endpoint: WebhookEndpointItem, result: PostResult): Promise<DeliverOutcome> => {
  const { message, settings, now, random, record } = attempt;
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid } = message;
  const answered = answeredFields(result);
  const retryAfter = retryAfterSeconds(result.retryAfter, now);
  const ownWait = waitBeforeNextAttempt(message.attempt, retryAfter, settings.schedule, random);
  const rest = endpointRestAfterFailures((endpoint.consecutive_failures ?? 0) + 1, retryAfter, settings.schedule, random);
  const retryAt = iso(now + Math.max(ownWait ?? 0, rest) * 1000);
  const streak = await finishDelivery(settings.db, merchantId, endpointUuid, {
    result: 'failed',
    at: iso(now),
    retryAt,
    answered: result.status !== undefined,
  });
  if (!streak) return 'dropped';
  if (result.status === 410) return disable(attempt, endpoint, answered, 'it answered 410 Gone');
  if (streakDisables(streak.failing_since ?? iso(now), now)) {
    return disable(attempt, endpoint, answered, 'its deliveries failed for 5 days in a row');
  }
  await noticeStreak(attempt, endpoint, streak);
  if (ownWait === undefined) {
    await record({ ...answered, next_attempt_at: null, status: 'failed' });
    return 'failed';
  }
  await record({ ...answered, status: 'pending', next_attempt_at: retryAt });
  const { holds: _holds, ...next } = message;
  await requeueOrThrow(settings, { ...next, attempt: message.attempt + 1, not_before: retryAt });
  return 'retrying';
};

/** Tells the merchant once per streak when it reaches STREAK_NOTICE_AFTER failures. */
const noticeStreak = async ({ message, settings, now }: Attempt, endpoint: WebhookEndpointItem, streak: WebhookEndpointItem) => {
  const failures = streak.consecutive_failures ?? 0;
  if (failures < STREAK_NOTICE_AFTER) return;
  if (await markStreakNotified(settings.db, message.merchant_id, message.endpoint_uuid, iso(now))) {
    await sendEndpointNotice(settings.db, message.merchant_id, endpoint, { kind: 'failing', failures });
  }
};

const disable = async (
  { message, settings, now, record }: Attempt,
  endpoint: WebhookEndpointItem,
  answered: ReturnType<typeof answeredFields>,
  reason: string,
) => {
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid } = message;
  await record({ ...answered, next_attempt_at: null, status: 'failed' });
  if (await disableWebhookEndpoint(settings.db, merchantId, endpointUuid, reason, iso(now))) {
    emitMetrics({ [METRIC.webhookEndpointsDisabled]: 1 });
    logger.warn('Webhook endpoint disabled', { merchant_id: merchantId, endpoint_uuid: endpointUuid, reason });
    await sendEndpointNotice(settings.db, merchantId, endpoint, { kind: 'disabled', reason });
  }
  return 'disabled' as const;
};
