import { type AttemptRecord, DISABLED_OUTCOME, recordWebhookDelivery } from '#shared/db/entities/webhook-delivery';
import {
  answersPromptly,
  claimDelivery,
  type DeliveryClaim,
  disableWebhookEndpoint,
  endpointHeldUntil,
  endRelease,
  finishDelivery,
  freeSlots,
  getWebhookEndpoint,
  markEndpointSlow,
  markStreakNotified,
  signingSecretBoxes,
  slotsAfterPromptAnswer,
  takeRelease,
  UNPROVEN_SLOTS,
  type WebhookEndpointItem,
} from '#shared/db/entities/webhook-endpoint';
import { removeWaitingDeliveries, waitingDeliveries } from '#shared/db/entities/webhook-waiting';
import type { TableRef } from '#shared/db/table-def';
import { errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { emitMetrics, METRIC } from '#shared/metrics';
import { type DeliveryMessage, onLaneOf, parseDeliveryMessage, type SendDeliveries } from '#shared/queue/webhooks';
import { eventBody, subscribes, TEST_EVENT_TYPE } from './events';
import { sendEndpointNotice } from './notices';
import { type PostResult, postWebhook, type TargetPolicy } from './outbound';
import { keeper, parkWhileHeld } from './park';
import { endpointRestAfterFailures, retryAfterSeconds, STREAK_NOTICE_AFTER, streakDisables, waitBeforeNextAttempt } from './schedule';
import { openSecret } from './secret-box';
import { signDelivery } from './signing';

export type DeliverSettings = {
  db: TableRef;
  policy: TargetPolicy;
  timeoutMs: number;
  schedule: number[];
  /** Sends a retry or a wait carried on. */
  requeue: SendDeliveries;
  now?: () => number;
  random?: () => number;
};

export type DeliverOutcome = 'delivered' | 'retrying' | 'failed' | 'disabled' | 'held' | 'parked' | 'released' | 'waiting' | 'dropped';

const iso = (ms: number) => new Date(ms).toISOString();

/** How long a delivery may go unanswered before its endpoint counts as slow: 2 s (less for a shorter timeout). */
const slowAfterMs = (timeoutMs: number) => Math.min(2000, timeoutMs / 2);

type Attempt = {
  message: DeliveryMessage;
  settings: DeliverSettings;
  now: number;
  random: () => number;
  /** Records this attempt on the delivery, on top of what every record of it carries. */
  record: (fields: Omit<AttemptRecord, 'attempt' | 'at'>, options?: { keepSucceeded?: boolean }) => Promise<void>;
};

/** Whether the message was sent to come back when a hold ending at `heldUntil` ends (or later). */
const dueBy = (message: DeliveryMessage, heldUntil: number) =>
  message.not_before !== undefined && Date.parse(message.not_before) >= heldUntil;

/** Sends messages to the queue and answers `outcome`, or throws when the queue refuses one. */
const requeueAs = async (outcome: DeliverOutcome, settings: DeliverSettings, ...messages: DeliveryMessage[]) => {
  const sent = await settings.requeue(messages);
  // Thrown, the message is not deleted: SQS hands it over again after its visibility timeout.
  if (sent.some((ok) => !ok)) throw new Error('The webhooks queue refused a delivery message');
  return outcome;
};

const carryOn = (settings: DeliverSettings, message: DeliveryMessage, at: number) =>
  requeueAs('waiting', settings, { ...message, not_before: iso(at) });

/** One delivery message: a slot claimed, one POST, its outcome recorded (docs/webhooks.md#how-it-works); throws if table or queue fail. */
export const deliver = async (message: DeliveryMessage, settings: DeliverSettings): Promise<DeliverOutcome> => {
  const now = settings.now?.() ?? Date.now();
  if (message.not_before !== undefined && Date.parse(message.not_before) > now + 1000) return requeueAs('waiting', settings, message);
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid, event } = message;
  if (message.wake) return wake(settings, message, now);
  const json = JSON.stringify(event);
  const attempt: Attempt = {
    message,
    settings,
    now,
    random: settings.random ?? Math.random,
    record: (fields, options) =>
      recordWebhookDelivery(
        settings.db,
        merchantId,
        endpointUuid,
        { id: event.id, type: event.type, json },
        { ...fields, attempt: message.attempt, at: iso(now) },
        options,
      ),
  };
  const claimed = await claim(attempt);
  if (typeof claimed === 'string') return claimed;
  const result = await send(attempt, claimed);
  const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
  emitMetrics({ [ok ? METRIC.webhookDeliveries : METRIC.webhookFailures]: 1, [METRIC.webhookLatency]: result.latencyMs });
  return ok ? recordSuccess(attempt, claimed, result) : recordFailure(attempt, claimed, result);
};

/** Claims one of the endpoint's delivery slots, or says what became of the message. */
const claim = async (attempt: Attempt): Promise<WebhookEndpointItem | DeliverOutcome> => {
  const { message, settings, now } = attempt;
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid, event } = message;
  // A test reaches a disabled endpoint too: the merchant checks the receiver before enabling it again.
  const claimed = await claimDelivery(settings.db, merchantId, endpointUuid, now, {
    anyState: event.type === TEST_EVENT_TYPE,
    token: `${event.id}#${message.attempt}#${now}`,
    timeoutMs: settings.timeoutMs,
  });
  if (claimed.kind === 'missing' || !subscribes(claimed.endpoint, event.type)) {
    if (claimed.kind === 'claimed') {
      await finishDelivery(settings.db, merchantId, endpointUuid, { result: 'released' });
      // It may have been the delivery the parked ones were waiting for.
      if (claimed.endpoint.waiting !== undefined) await releaseParked(settings, message, now);
    }
    return 'dropped';
  }
  if (claimed.kind === 'refused') return holdRefused({ ...attempt, message: onLaneOf(message, claimed.endpoint) }, claimed);
  return claimed.endpoint;
};

/** A refused claim: recorded as failed when the endpoint is disabled, parked while it is held back, else the message waits. */
const holdRefused = async (attempt: Attempt, refused: Extract<DeliveryClaim, { kind: 'refused' }>): Promise<DeliverOutcome> => {
  const { message, settings, now, random } = attempt;
  const { endpoint } = refused;
  if (!endpoint.enabled && message.event.type !== TEST_EVENT_TYPE) {
    // A copy of a message whose delivery succeeded (a stream record read again) leaves it succeeded.
    await attempt.record(DISABLED_OUTCOME, { keepSucceeded: true });
    // The parked deliveries are failed too, each as it comes back (and then recoverable).
    if (endpoint.waiting !== undefined) await releaseParked(settings, message, now);
    return 'failed';
  }
  // A disabled endpoint (only a test reaches it) is held back by nothing but its slots.
  const heldUntil = endpoint.enabled ? endpointHeldUntil(endpoint) : 0;
  if (heldUntil > now) {
    // The delivery that set the hold, back a moment early, waits; any other is parked (or, the hold just ended, comes again soon).
    if (dueBy(message, heldUntil)) return carryOn(settings, message, heldUntil);
    if (await parkedAndNoted(settings, message, now, heldUntil, endpoint.waiting === undefined)) return 'parked';
    return requeueAs('held', settings, { ...message, not_before: iso(now + 1000 * random()) });
  }
  const holds = (message.holds ?? 0) + 1;
  // All slots in flight: a prompt endpoint is tried again in 1 s, 2 s, 4 s... up to the timeout, any other after a timeout (no spinning).
  const backOff = answersPromptly(endpoint, now) ? Math.min(settings.timeoutMs, 1000 * 2 ** (holds - 1)) : settings.timeoutMs;
  const wait = backOff * (0.5 + random());
  return requeueAs('held', settings, { ...message, holds, not_before: iso(now + wait) });
};

/** Parks the message while its endpoint's hold stands (false when it has ended); the first park of a backlog also leaves its keeper. */
const parkedAndNoted = async (settings: DeliverSettings, message: DeliveryMessage, now: number, heldUntil: number, first: boolean) => {
  const noted = await parkWhileHeld(settings.db, message.merchant_id, message.endpoint_uuid, [{ message, at: now }], now);
  if (!noted) return false;
  if (first || noted.first) await requeueAs('parked', settings, keeper(message, heldUntil));
  return true;
};

/** How many parked deliveries one release of a disabled endpoint sends back, each to be recorded as failed. */
const RELEASE_CHUNK = 250;
const RELEASE_SEND_ROUNDS = 3;

/** Sends the endpoint's parked deliveries back, oldest first, as many as its free slots: a backlog drains at the endpoint's pace. */
const releaseParked = async (settings: DeliverSettings, message: DeliveryMessage, now: number): Promise<{ left: boolean }> => {
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid } = message;
  const owner = `${message.event.id}#${message.attempt}${message.keep ? '#keep' : message.wake ? '#wake' : ''}`;
  const endpoint = await takeRelease(settings.db, merchantId, endpointUuid, owner, now);
  // Another deliverer is releasing: what it leaves is its to release, or the keeper's.
  if (!endpoint) return { left: true };
  const limit = endpoint.enabled ? Math.max(1, freeSlots(endpoint, now)) : RELEASE_CHUNK;
  const parked = await waitingDeliveries(settings.db, merchantId, endpointUuid, limit);
  const read = parked.map(({ key, message: stored }) => ({ key, parsed: parseDeliveryMessage(stored) }));
  // A park that is not a delivery message could never be delivered: it goes with the sent ones.
  const done = read.filter(({ parsed }) => parsed === undefined).map(({ key }) => key);
  let pending = read.flatMap(({ key, parsed }) => (parsed ? [{ key, parsed: onLaneOf(parsed, endpoint) }] : []));
  // The queue may refuse a few of a large batch: those are sent again at once, a few rounds, rather than the release failed.
  for (let round = 0; round < RELEASE_SEND_ROUNDS && pending.length > 0; round++) {
    const sent = await settings.requeue(pending.map(({ parsed }) => parsed));
    done.push(...pending.filter((_, index) => sent[index] === true).map(({ key }) => key));
    pending = pending.filter((_, index) => sent[index] !== true);
  }
  await removeWaitingDeliveries(settings.db, done);
  const complete = pending.length === 0;
  const emptied = complete && parked.length < limit;
  await endRelease(settings.db, merchantId, endpointUuid, emptied, endpoint.waiting ?? 0);
  if (!complete) throw new Error('The webhooks queue refused a released delivery');
  return { left: !emptied };
};

/** A wake-up releases the parked deliveries once the hold has passed; a keeper (`keep`) comes back every timeout while any are parked. */
const wake = async (settings: DeliverSettings, message: DeliveryMessage, now: number): Promise<DeliverOutcome> => {
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid } = message;
  const endpoint = await getWebhookEndpoint(settings.db, merchantId, endpointUuid, true);
  if (endpoint?.waiting === undefined) return 'dropped';
  const laned = onLaneOf(message, endpoint);
  const heldUntil = endpoint.enabled ? endpointHeldUntil(endpoint) : 0;
  if (heldUntil > now) return message.keep || dueBy(message, heldUntil) ? carryOn(settings, laned, heldUntil) : 'dropped';
  const { left } = await releaseParked(settings, message, now);
  return message.keep && left ? carryOn(settings, laned, now + settings.timeoutMs) : 'released';
};

/** The POST, signed by every secret in effect; unanswered after a moment, the endpoint is marked slow so its other deliveries wait. */
const send = async ({ message, settings, now }: Attempt, endpoint: WebhookEndpointItem): Promise<PostResult> => {
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid, event } = message;
  try {
    const body = eventBody(event);
    const secrets = await Promise.all(signingSecretBoxes(endpoint, now).map((box) => openSecret(box, merchantId, endpointUuid)));
    const headers = signDelivery(secrets, event.id, new Date(now), body);
    let marking: Promise<unknown> | undefined;
    const slow = setTimeout(() => {
      marking = markEndpointSlow(settings.db, merchantId, endpointUuid, iso(Date.now()), iso(now + settings.timeoutMs)).catch(
        (error: unknown) =>
          logger.warn('Could not mark a slow webhook endpoint', { endpoint_uuid: endpointUuid, error_name: errorName(error) }),
      );
    }, slowAfterMs(settings.timeoutMs));
    // The mark lands before the outcome is recorded, which clears it: a mark left behind would hold parked deliveries for good.
    return await postWebhook(endpoint.url, headers, body, { timeoutMs: settings.timeoutMs, policy: settings.policy }).finally(async () => {
      clearTimeout(slow);
      await marking;
    });
  } catch (error) {
    // Nothing was sent (the secret could not be opened): give the claim back, and let the message come back.
    await finishDelivery(settings.db, merchantId, endpointUuid, { result: 'released' });
    throw error;
  }
};

type Answered = ReturnType<typeof answeredFields>;

const answeredFields = (result: PostResult) => ({
  response_status: result.status ?? null,
  latency_ms: result.latencyMs,
  response_body: result.body || null,
  error: result.error ?? null,
});

/** A 2xx ends the failure streak; a prompt answer earns slots (twice the endpoint's; after a streak, UNPROVEN_SLOTS). */
const recordSuccess = async ({ message, settings, now, record }: Attempt, endpoint: WebhookEndpointItem, result: PostResult) => {
  const fast = result.latencyMs < slowAfterMs(settings.timeoutMs);
  const wasFailing = endpoint.failing_since !== undefined;
  const slots = wasFailing ? UNPROVEN_SLOTS : slotsAfterPromptAnswer(endpoint);
  const [, after] = await Promise.all([
    record({ ...answeredFields(result), next_attempt_at: null, status: 'succeeded' }),
    finishDelivery(settings.db, message.merchant_id, message.endpoint_uuid, {
      result: 'delivered',
      wasFailing,
      ...(fast ? { prompt: { at: iso(now), slots } } : {}),
    }),
  ]);
  // This answer may have ended the hold the parked deliveries wait for.
  const ended = settings.now?.() ?? Date.now();
  if (after?.waiting !== undefined && endpointHeldUntil(after) <= ended) await releaseParked(settings, message, ended);
  return 'delivered' as const;
};

/** A failure: the endpoint rests by its failures in a row; this delivery disables it, is given up, or retries from the next probe on. */
const recordFailure = async (attempt: Attempt, endpoint: WebhookEndpointItem, result: PostResult): Promise<DeliverOutcome> => {
  const { settings, now, random, record } = attempt;
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid } = attempt.message;
  const answered = answeredFields(result);
  // The waits count from the failure, not from the attempt's start: after a 15 s timeout the 5 s rest has not passed yet.
  const failedAt = settings.now?.() ?? Date.now();
  const retryAfter = retryAfterSeconds(result.retryAfter, failedAt);
  const ownWait = waitBeforeNextAttempt(attempt.message.attempt, retryAfter, settings.schedule, random);
  const rest = endpointRestAfterFailures((endpoint.consecutive_failures ?? 0) + 1, retryAfter, settings.schedule, random);
  // The endpoint's hold is its own schedule's; a delivery far along its schedule does not hold the others longer.
  const probeAt = iso(failedAt + rest * 1000);
  const streak = await finishDelivery(settings.db, merchantId, endpointUuid, {
    result: 'failed',
    at: iso(now),
    retryAt: probeAt,
    answered: result.status !== undefined,
    probe: endpoint.failing_since !== undefined,
  });
  if (!streak) return 'dropped';
  // What comes back goes on the lane of the endpoint as this delivery left it: after a failure, the slow lane.
  const message = onLaneOf(attempt.message, streak);
  if (result.status === 410) return disable(attempt, streak, answered, 'it answered 410 Gone');
  if (streakDisables(streak.failing_since ?? iso(now), now)) {
    return disable(attempt, streak, answered, 'its deliveries failed for 5 days in a row');
  }
  await noticeStreak(attempt, endpoint, streak);
  // Whatever is parked by the probe time is released by a wake-up then, unless this delivery comes back then itself.
  const wakeUp = { ...message, wake: true as const, not_before: probeAt };
  if (ownWait === undefined) {
    await record({ ...answered, next_attempt_at: null, status: 'failed' });
    return requeueAs('failed', settings, wakeUp);
  }
  const retryAt = ownWait > rest ? iso(failedAt + ownWait * 1000) : probeAt;
  await record({ ...answered, status: 'pending', next_attempt_at: retryAt });
  const { holds: _holds, ...next } = message;
  const retry = { ...next, attempt: message.attempt + 1, not_before: retryAt };
  if (retryAt !== probeAt) return requeueAs('retrying', settings, retry, wakeUp);
  // Behind any parked deliveries, so the wake-up probes with the one parked longest: an outage's failures go to every event in turn.
  const behindParked = streak.waiting !== undefined && (await parkedAndNoted(settings, retry, failedAt, Date.parse(probeAt), false));
  return requeueAs('retrying', settings, behindParked ? wakeUp : retry);
};

/** Tells the merchant once per streak, when it reaches STREAK_NOTICE_AFTER failures. */
const noticeStreak = async ({ message, settings, now }: Attempt, endpoint: WebhookEndpointItem, streak: WebhookEndpointItem) => {
  const failures = streak.consecutive_failures ?? 0;
  if (failures < STREAK_NOTICE_AFTER) return;
  if (await markStreakNotified(settings.db, message.merchant_id, message.endpoint_uuid, iso(now))) {
    await sendEndpointNotice(settings.db, message.merchant_id, endpoint, { kind: 'failing', failures });
  }
};

const disable = async ({ message, settings, now, record }: Attempt, endpoint: WebhookEndpointItem, answered: Answered, reason: string) => {
  const { merchant_id: merchantId, endpoint_uuid: endpointUuid } = message;
  await record({ ...answered, next_attempt_at: null, status: 'failed' });
  if (await disableWebhookEndpoint(settings.db, merchantId, endpointUuid, reason, iso(now))) {
    emitMetrics({ [METRIC.webhookEndpointsDisabled]: 1 });
    logger.warn('Webhook endpoint disabled', { merchant_id: merchantId, endpoint_uuid: endpointUuid, reason });
    await sendEndpointNotice(settings.db, merchantId, endpoint, { kind: 'disabled', reason });
  }
  // Its parked deliveries come back to be recorded as failed (and so recoverable).
  if (endpoint.waiting !== undefined) await releaseParked(settings, message, now);
  return 'disabled' as const;
};
