import * as z from 'zod/mini';
import { type TableRef, WEBHOOKS_CONSUMER_TIMEOUT_SECONDS } from '#shared/db/table-def';
import { transactWrite } from '#shared/db/transact';
import { MAX_WEBHOOK_ENDPOINTS } from '#shared/schemas/webhooks';
import { itemKey, type Key, nullableString, storedItem, updateApplied, updateIfAllowed, updateOrRefused } from './base';

/** A merchant's webhook endpoint, with its deliverer's state (docs/webhooks.md#how-it-works), and `WEBHOOK_COUNT`. */
export const DELIVERY_SLOTS = 20;
export const UNPROVEN_SLOTS = 2;
/** How long a prompt 2xx keeps an endpoint on its earned slots: a quiet endpoint proves itself again. */
const FAST_ANSWER_COUNTS_MS = 10 * 60_000;

const STREAK = ['failing_since', 'consecutive_failures', 'retry_at', 'streak_notified_at'];

const countKey = (merchantId: string): Key => itemKey(merchantId, 'WEBHOOK_COUNT');

const endpointSchema = z.looseObject({
  uuid: z.string(),
  url: z.string(),
  description: nullableString(),
  /** The event types delivered; empty: every type. */
  events: z.array(z.string()),
  enabled: z.boolean(),
  /** Why the service disabled it (410 Gone, a failure streak); null when enabled or disabled by the merchant. */
  disabled_reason: nullableString(),
  disabled_at: z.optional(z.string()),
  secret_box: z.string(),
  /** Secrets replaced within the last day, newest first, each signing until its `expires_at`. */
  previous_secrets: z.optional(z.array(z.object({ box: z.string(), expires_at: z.string() }))),
  /** The single previous secret rotations kept before `previous_secrets`: read until it expires, folded in by the next rotation. */
  previous_secret_box: z.optional(z.string()),
  previous_secret_expires_at: z.optional(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  failing_since: z.optional(z.string()),
  consecutive_failures: z.optional(z.number()),
  retry_at: z.optional(z.string()),
  streak_notified_at: z.optional(z.string()),
  in_flight: z.optional(z.number()),
  in_flight_at: z.optional(z.string()),
  /** Names the last claim, so a claim retried after its answer was lost knows it was applied. */
  claim_token: z.optional(z.string()),
  slow_until: z.optional(z.string()),
  slow_at: z.optional(z.string()),
  fast_at: z.optional(z.string()),
  slots: z.optional(z.number()),
  waiting: z.optional(z.number()),
  /** Until when, and for which message, one deliverer is releasing the parked deliveries. */
  releasing_until: z.optional(z.string()),
  releasing_by: z.optional(z.string()),
});
export type WebhookEndpointItem = z.output<typeof endpointSchema>;

const endpoint = storedItem('webhook endpoint', endpointSchema, 'WEBHOOK#');
const webhookEndpointKey = endpoint.key;
export const { parse: parseWebhookEndpoint, get: getWebhookEndpoint } = endpoint;

/** Puts a new endpoint and counts it in one transaction: refused on `count` at the maximum, on `endpoint` when it exists already. */
export const putWebhookEndpoint = (
  db: TableRef,
  merchantId: string,
  endpoint: Pick<WebhookEndpointItem, 'uuid' | 'url' | 'description' | 'events' | 'enabled' | 'secret_box'>,
  now: string,
): Promise<void> =>
  transactWrite(db, {
    endpoint: {
      Put: {
        Item: {
          ...webhookEndpointKey(merchantId, endpoint.uuid),
          type: 'webhook_endpoint',
          ...endpoint,
          disabled_reason: null,
          created_at: now,
          updated_at: now,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    count: {
      Update: {
        Key: countKey(merchantId),
        UpdateExpression: 'SET endpoints = if_not_exists(endpoints, :zero) + :one',
        ConditionExpression: 'attribute_not_exists(endpoints) OR endpoints < :max',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': MAX_WEBHOOK_ENDPOINTS },
      },
    },
  });

/** Deletes an endpoint and uncounts it; refused (TransactionRefused on `endpoint`) when it does not exist. */
export const deleteWebhookEndpoint = (db: TableRef, merchantId: string, uuid: string): Promise<void> =>
  transactWrite(db, {
    endpoint: { Delete: { Key: webhookEndpointKey(merchantId, uuid), ConditionExpression: 'attribute_exists(pk)' } },
    count: {
      // if_not_exists: a merchant without endpoints has no count item, and the Delete's condition refuses the transaction anyway.
      Update: {
        Key: countKey(merchantId),
        UpdateExpression: 'SET endpoints = if_not_exists(endpoints, :one) - :one',
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
  });

/** Every endpoint of the merchant (at most MAX_WEBHOOK_ENDPOINTS), oldest first. */
export const allWebhookEndpoints = async (db: TableRef, merchantId: string): Promise<WebhookEndpointItem[]> =>
  (await endpoint.all(db, merchantId)).sort((a, b) => a.created_at.localeCompare(b.created_at));

type EndpointUpdate = {
  set?: string;
  remove?: string;
  condition: string;
  values: Record<string, unknown>;
  names?: Record<string, string>;
  returnValues?: 'ALL_NEW' | 'UPDATED_OLD';
};

/** One conditional UpdateItem of the endpoint: the attributes `returnValues` asks for (else {}), or undefined when the condition failed. */
const updateEndpointItem = (db: TableRef, merchantId: string, uuid: string, update: EndpointUpdate) =>
  updateIfAllowed(db, {
    Key: webhookEndpointKey(merchantId, uuid),
    UpdateExpression: [update.set && `SET ${update.set}`, update.remove && `REMOVE ${update.remove}`].filter(Boolean).join(' '),
    ConditionExpression: `attribute_exists(pk) AND (${update.condition})`,
    ...(Object.keys(update.values).length > 0 ? { ExpressionAttributeValues: update.values } : {}),
    ...(update.names ? { ExpressionAttributeNames: update.names } : {}),
    ReturnValues: update.returnValues ?? 'NONE',
  });

const updateEndpoint = async (db: TableRef, merchantId: string, uuid: string, update: EndpointUpdate) =>
  (await updateEndpointItem(db, merchantId, uuid, update)) !== undefined;

/** Applies the merchant's changes; false when the endpoint does not exist. Enabling it again clears the failure streak. */
export const updateWebhookEndpoint = (
  db: TableRef,
  merchantId: string,
  uuid: string,
  changes: Partial<Pick<WebhookEndpointItem, 'url' | 'description' | 'events' | 'enabled'>>,
  now: string,
) => {
  const entries = Object.entries(changes).filter(([, value]) => value !== undefined);
  const values = Object.fromEntries(entries.map(([name, value]) => [`:${name}`, value]));
  // Enabled again, or disabled by the merchant: no longer the service's disabling (whose missed events are recorded for recover).
  const ownState = changes.enabled !== undefined;
  const set = [...entries.map(([name]) => `#${name} = :${name}`), 'updated_at = :now', ...(ownState ? ['disabled_reason = :null'] : [])];
  return updateEndpoint(db, merchantId, uuid, {
    set: set.join(', '),
    remove: [...(changes.enabled === true ? STREAK : []), ...(ownState ? ['disabled_at'] : [])].join(', '),
    condition: 'attribute_exists(pk)',
    values: { ':now': now, ...values, ...(ownState ? { ':null': null } : {}) },
    ...(entries.length > 0 ? { names: Object.fromEntries(entries.map(([name]) => [`#${name}`, name])) } : {}),
  });
};

/** The most replaced secrets kept signing: a delivery carries at most this many signatures besides the current one. */
export const MAX_PREVIOUS_SECRETS = 9;

type PreviousSecret = NonNullable<WebhookEndpointItem['previous_secrets']>[number];

const livePreviousSecrets = (endpoint: WebhookEndpointItem, now: number): PreviousSecret[] => {
  const legacy =
    endpoint.previous_secret_box !== undefined && endpoint.previous_secret_expires_at !== undefined
      ? [{ box: endpoint.previous_secret_box, expires_at: endpoint.previous_secret_expires_at }]
      : [];
  return [...(endpoint.previous_secrets ?? []), ...legacy]
    .filter((previous) => Date.parse(previous.expires_at) > now)
    .sort((a, b) => b.expires_at.localeCompare(a.expires_at));
};

/** The sealed secrets that sign a delivery at `now`: the current one first, then every replaced one still in its overlap. */
export const signingSecretBoxes = (endpoint: WebhookEndpointItem, now: number): string[] => [
  endpoint.secret_box,
  ...livePreviousSecrets(endpoint, now).map((previous) => previous.box),
];

/** What a rotation keeps: the current secret until `previousUntil`, then the replaced ones still signing, at most MAX_PREVIOUS_SECRETS. */
export const previousSecretsAfterRotation = (endpoint: WebhookEndpointItem, previousUntil: string, now: number): PreviousSecret[] =>
  [{ box: endpoint.secret_box, expires_at: previousUntil }, ...livePreviousSecrets(endpoint, now)].slice(0, MAX_PREVIOUS_SECRETS);

/** Makes `secretBox` the endpoint's secret, the replaced ones still signing, if it is as read (two rotations cannot both keep one). */
export const rotateWebhookSecret = (
  db: TableRef,
  merchantId: string,
  endpoint: WebhookEndpointItem,
  secretBox: string,
  previousUntil: string,
  now: string,
) =>
  updateEndpoint(db, merchantId, endpoint.uuid, {
    set: 'secret_box = :box, previous_secrets = :previous, updated_at = :now',
    remove: 'previous_secret_box, previous_secret_expires_at',
    condition: 'updated_at = :read',
    values: {
      ':box': secretBox,
      ':previous': previousSecretsAfterRotation(endpoint, previousUntil, Date.parse(now)),
      ':now': now,
      ':read': endpoint.updated_at,
    },
  });

/** The service disables an endpoint (410 Gone, a failure streak); false when it was already disabled or is gone. */
export const disableWebhookEndpoint = (db: TableRef, merchantId: string, uuid: string, reason: string, now: string) =>
  updateEndpoint(db, merchantId, uuid, {
    set: 'enabled = :false, disabled_reason = :reason, disabled_at = :now, updated_at = :now',
    remove: 'retry_at',
    condition: 'enabled = :true',
    values: { ':false': false, ':true': true, ':reason': reason, ':now': now },
  });

/** Until when new deliveries to the endpoint wait (its failure streak's retry time, a slow delivery's timeout); 0 when they need not. */
export const endpointHeldUntil = (endpoint: Pick<WebhookEndpointItem, 'retry_at' | 'slow_until'>): number =>
  Math.max(0, ...[endpoint.retry_at, endpoint.slow_until].map((at) => (at === undefined ? 0 : Date.parse(at))));

/** Whether the endpoint is on its earned `slots`: a prompt 2xx within FAST_ANSWER_COUNTS_MS and no failure streak (the claim's rule). */
export const answersPromptly = (endpoint: Pick<WebhookEndpointItem, 'fast_at' | 'failing_since'>, now: number): boolean =>
  endpoint.failing_since === undefined && endpoint.fast_at !== undefined && Date.parse(endpoint.fast_at) >= now - FAST_ANSWER_COUNTS_MS;

/** Whether the endpoint's deliveries go on the slow lane: its last outcome was not a prompt answer, or one is unanswered now. */
export const onSlowLane = (endpoint: Pick<WebhookEndpointItem, 'fast_at' | 'slow_at'>): boolean =>
  endpoint.fast_at === undefined || endpoint.slow_at !== undefined;

const earnedSlots = (endpoint: Pick<WebhookEndpointItem, 'slots'>) =>
  Math.min(DELIVERY_SLOTS, Math.max(UNPROVEN_SLOTS, endpoint.slots ?? UNPROVEN_SLOTS));

/** The slots a prompt answer earns: twice those the endpoint had, up to DELIVERY_SLOTS (a slow start). */
export const slotsAfterPromptAnswer = (endpoint: Pick<WebhookEndpointItem, 'slots'>) => Math.min(DELIVERY_SLOTS, 2 * earnedSlots(endpoint));

/** How many more deliveries a claim would let in now: the endpoint's slots (one while it fails) less those in flight. */
export const freeSlots = (endpoint: Pick<WebhookEndpointItem, 'fast_at' | 'failing_since' | 'in_flight' | 'slots'>, now: number) => {
  const slots = endpoint.failing_since !== undefined ? 1 : answersPromptly(endpoint, now) ? earnedSlots(endpoint) : UNPROVEN_SLOTS;
  return Math.max(0, slots - Math.max(0, endpoint.in_flight ?? 0));
};

/** The longest a deliverer runs: a release lease older than that was left by a deliverer that died. */
const DELIVERER_RUNS_MS = WEBHOOKS_CONSUMER_TIMEOUT_SECONDS * 1000;
/** A claim outlives its POST by its few writes at most: a count whose latest claim is older than the timeout and this was left by deliverers that died. */
const CLAIM_WRITES_MS = 5_000;

export type DeliveryClaim =
  | { kind: 'claimed'; endpoint: WebhookEndpointItem }
  | { kind: 'missing' }
  | { kind: 'refused'; endpoint: WebhookEndpointItem };

const NOT_HELD = '(attribute_not_exists(retry_at) OR retry_at <= :now) AND (attribute_not_exists(slow_until) OR slow_until <= :now)';

/** Claims one of the endpoint's delivery slots in one conditional UpdateItem: the endpoint after it, or, refused, as it was. */
export const claimDelivery = async (
  db: TableRef,
  merchantId: string,
  uuid: string,
  now: number,
  options: { anyState: boolean; token: string; timeoutMs: number },
): Promise<DeliveryClaim> => {
  const key = webhookEndpointKey(merchantId, uuid);
  const nowIso = new Date(now).toISOString();
  const result = await updateOrRefused(db, {
    Key: key,
    UpdateExpression: 'SET in_flight = if_not_exists(in_flight, :zero) + :one, in_flight_at = :now, claim_token = :token',
    ConditionExpression: [
      'attribute_exists(pk)',
      '(attribute_not_exists(claim_token) OR claim_token <> :token)',
      options.anyState ? `(enabled = :false OR (${NOT_HELD}))` : `enabled = :true AND ${NOT_HELD}`,
      '(attribute_not_exists(in_flight) OR in_flight < :one OR (attribute_not_exists(failing_since) AND (in_flight < :unproven OR (fast_at >= :recent AND in_flight < slots AND in_flight < :slots))))',
    ].join(' AND '),
    ExpressionAttributeValues: {
      ':zero': 0,
      ':one': 1,
      ':now': nowIso,
      ':slots': DELIVERY_SLOTS,
      ':unproven': UNPROVEN_SLOTS,
      ':recent': new Date(now - FAST_ANSWER_COUNTS_MS).toISOString(),
      ':token': options.token,
      ...(options.anyState ? { ':false': false } : { ':true': true }),
    },
  });
  if ('item' in result) {
    const endpoint = parseWebhookEndpoint(result.item);
    // Below one after this claim's +1: a retried release took it down twice; set right so slots do not widen.
    if ((endpoint.in_flight ?? 1) < 1) await resetCount(db, key, 1, 'in_flight = :seen', endpoint.in_flight);
    return { kind: 'claimed', endpoint };
  }
  if (result.refused === undefined) return { kind: 'missing' };
  const endpoint = parseWebhookEndpoint(result.refused);
  // This very claim, retried by the SDK after its answer was lost: it was applied.
  if (endpoint.claim_token === options.token) return { kind: 'claimed', endpoint };
  const claimedAt = endpoint.in_flight_at;
  if (typeof claimedAt === 'string' && now - Date.parse(claimedAt) > Math.min(DELIVERER_RUNS_MS, options.timeoutMs + CLAIM_WRITES_MS))
    await resetCount(db, key, 0, 'in_flight_at = :seen', claimedAt);
  return { kind: 'refused', endpoint };
};

/** Sets the in-flight count to `value` while `condition` (on `:seen`, what the caller read) holds; a lost race leaves it alone. */
const resetCount = (db: TableRef, key: Key, value: number, condition: string, seen: unknown) =>
  updateApplied(db, {
    Key: key,
    UpdateExpression: 'SET in_flight = :value',
    ConditionExpression: condition,
    ExpressionAttributeValues: { ':value': value, ':seen': seen },
  });

type DeliveryEnd =
  | { result: 'released' }
  | { result: 'delivered'; wasFailing: boolean; prompt?: { at: string; slots: number } }
  /** `probe`: claimed while the endpoint was failing already; only a probe's failure lengthens the streak. */
  | { result: 'failed'; at: string; retryAt: string; answered: boolean; probe: boolean };

/** Ends a claimed delivery: gives the claim back and records its outcome in one UpdateItem; the endpoint now, undefined when deleted. */
export const finishDelivery = async (db: TableRef, merchantId: string, uuid: string, end: DeliveryEnd) => {
  const answered = end.result === 'delivered' || (end.result === 'failed' && end.answered);
  const prompt = end.result === 'delivered' ? end.prompt : undefined;
  const remove = [
    ...(answered ? ['slow_until'] : []),
    ...(end.result !== 'released' && prompt === undefined ? ['fast_at', 'slots'] : []),
    ...(prompt !== undefined ? ['slow_at'] : []),
    ...(end.result === 'delivered' && end.wasFailing ? STREAK : []),
  ];
  const removal = remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : '';
  const update =
    end.result === 'failed'
      ? {
          UpdateExpression: end.probe
            ? `SET failing_since = if_not_exists(failing_since, :at), retry_at = :retryAt ADD in_flight :minus, consecutive_failures :one${removal}`
            : `SET failing_since = if_not_exists(failing_since, :at), consecutive_failures = if_not_exists(consecutive_failures, :one), retry_at = :retryAt ADD in_flight :minus${removal}`,
          ExpressionAttributeValues: { ':minus': -1, ':one': 1, ':at': end.at, ':retryAt': end.retryAt },
        }
      : prompt !== undefined
        ? {
            UpdateExpression: `SET fast_at = :fastAt, slots = :slots ADD in_flight :minus${removal}`,
            ExpressionAttributeValues: { ':minus': -1, ':fastAt': prompt.at, ':slots': prompt.slots },
          }
        : { UpdateExpression: `ADD in_flight :minus${removal}`, ExpressionAttributeValues: { ':minus': -1 } };
  const item = await updateIfAllowed(db, {
    Key: webhookEndpointKey(merchantId, uuid),
    ...update,
    ConditionExpression: 'attribute_exists(pk)',
  });
  return item && parseWebhookEndpoint(item);
};

/** A delivery is still unanswered after a moment: no other starts before `until`, so a hanging endpoint's backlog waits once. */
export const markEndpointSlow = (db: TableRef, merchantId: string, uuid: string, now: string, until: string) =>
  updateEndpoint(db, merchantId, uuid, {
    set: 'slow_until = :until, slow_at = :now',
    condition: 'attribute_not_exists(slow_until) OR slow_until < :now',
    values: { ':until': until, ':now': now },
  });

/** Notes `count` deliveries parked while the endpoint is held back: undefined when the hold has ended, else whether they are the first. */
export const noteParkedDeliveries = async (db: TableRef, merchantId: string, uuid: string, now: string, count: number) => {
  const before = await updateEndpointItem(db, merchantId, uuid, {
    set: 'waiting = if_not_exists(waiting, :zero) + :count',
    condition: 'enabled = :true AND (retry_at > :now OR slow_until > :now)',
    values: { ':zero': 0, ':count': count, ':true': true, ':now': now },
    returnValues: 'UPDATED_OLD',
  });
  return before && { first: before.waiting === undefined };
};

/** Takes the release of the parked deliveries for `owner`: the endpoint, or undefined when nothing is parked or another is releasing. */
export const takeRelease = async (db: TableRef, merchantId: string, uuid: string, owner: string, now: number) => {
  const item = await updateEndpointItem(db, merchantId, uuid, {
    set: 'releasing_until = :until, releasing_by = :owner',
    condition: 'attribute_exists(waiting) AND (attribute_not_exists(releasing_until) OR releasing_until < :now OR releasing_by = :owner)',
    values: { ':until': new Date(now + DELIVERER_RUNS_MS).toISOString(), ':now': new Date(now).toISOString(), ':owner': owner },
    returnValues: 'ALL_NEW',
  });
  return item && parseWebhookEndpoint(item);
};

/** Ends a release; `emptied`, the `waiting` mark goes too, unless a delivery was parked meanwhile (`waiting` is no longer `seen`). */
export const endRelease = async (db: TableRef, merchantId: string, uuid: string, emptied: boolean, seen: number) => {
  const cleared =
    emptied &&
    (await updateEndpoint(db, merchantId, uuid, {
      remove: 'waiting, releasing_until, releasing_by',
      condition: 'waiting = :seen',
      values: { ':seen': seen },
    }));
  if (!cleared)
    await updateEndpoint(db, merchantId, uuid, { remove: 'releasing_until, releasing_by', condition: 'attribute_exists(pk)', values: {} });
};

/** Marks that the merchant was told of the current failure streak; false when someone already did. */
export const markStreakNotified = (db: TableRef, merchantId: string, uuid: string, now: string) =>
  updateEndpoint(db, merchantId, uuid, {
    set: 'streak_notified_at = :now',
    condition: 'attribute_not_exists(streak_notified_at) AND attribute_exists(failing_since)',
    values: { ':now': now },
  });
