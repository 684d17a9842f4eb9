import { percentile } from '#harness/bench/percentile';
import { eventTypeOf } from '#shared/domain/order-events';
import type { InvariantResult } from './checks';
import type { SoakMerchant } from './fixtures';
import { finalStatus, hadAmbiguousAttempt, isKeyed, type Op, record } from './ops';
import { type Behaviour, type Hit, orderTextDigest } from './receivers';
import type { MerchantTruth } from './truth';
import type { EndpointState, Profile, SoakEndpoint } from './webhooks';

/**
 * The invariants of the asynchronous side (what happens after the commit), checked against the
 * op log, the stored truth and what each receiver got:
 *
 * - every event reaches every subscribed endpoint that is up, verified with standardwebhooks;
 * - no endpoint is disabled by an outage shorter than the retry schedule (and a 410 disables);
 * - the change feed is never more than a few seconds behind for a healthy merchant;
 * - every order answered 201 gets its commission;
 * - the odd and the largest texts: answered 201 (or, over the storage limit, 413/422 naming the
 *   reason, never a 500), stored and delivered exactly as sent.
 *
 * The lags are figures too: per profile, p50, p99 and max.
 */

export type AsyncInput = {
  ops: readonly Op[];
  truths: readonly MerchantTruth[];
  endpoints: readonly SoakEndpoint[];
  states: ReadonlyMap<string, EndpointState>;
  /** Attempts in the stage processes' retry schedule: an event with that many failed attempts was given up rightly. */
  scheduleAttempts: number;
  maxLagSeconds: number;
};

export type LagFigures = { count: number; p50: number; p99: number; max: number; missing: number };
export type AsyncFigures = {
  /** Per merchant profile: the change feed's lag, the order.created delivery to an always-up endpoint, the commission booked. */
  lags: Record<Profile, { feed: LagFigures; delivery: LagFigures; commission: LagFigures }>;
  /** Per receiver behaviour (410 left out): from an order's 201 to its order.created answered 2xx by an endpoint of that behaviour. */
  deliveryByBehaviour: Partial<Record<Behaviour, LagFigures>>;
  /** Per receiver behaviour: endpoints, requests received, answered 2xx, hung, verified. */
  receivers: Record<Behaviour, { endpoints: number; requests: number; ok: number; hung: number; verified: number }>;
  /** Per text kind: creates and their final statuses. */
  texts: Record<string, Record<string, number>>;
};

const result = (id: string, title: string): InvariantResult => ({ id, title, checked: 0, violations: [], notes: new Map() });
const note = (into: InvariantResult, what: string) => into.notes.set(what, (into.notes.get(what) ?? 0) + 1);
const where = (merchant: SoakMerchant) => `${merchant.key} (${merchant.stage})`;
const CREATES = new Set(['create-v2', 'create-legacy']);

type Expected = { id: string; type: string; orderUuid?: string };

/** The events the workload's changes must have made, from the stored truth (seeded history excluded). */
export const expectedEvents = (truth: MerchantTruth): Expected[] => {
  const events: Expected[] = [];
  const seeded = new Set(truth.merchant.seededOrders.map((order) => order.uuid));
  for (const order of truth.orders) {
    const version = order.version ?? 1;
    for (let n = seeded.has(order.uuid) ? 2 : 1; n <= version; n++)
      events.push({ id: `evt_${order.uuid}_v${n}`, type: eventTypeOf(order, n), orderUuid: order.uuid });
  }
  for (const [uuid, ledger] of truth.ledgers)
    for (const entry of ledger?.entries ?? []) {
      if (entry.type === 'accrual') events.push({ id: `evt_commission_${uuid}_accrual_v${entry.version}`, type: 'commission.accrued' });
      if (entry.type === 'reversal') events.push({ id: `evt_commission_${uuid}_reversal_v${entry.version}`, type: 'commission.reversed' });
    }
  for (const request of truth.requests)
    if (truth.merchant.pendingRequests.has(request.uuid) && request.status !== 'pending')
      events.push({ id: `evt_areq_${request.uuid}_${request.status}`, type: `affiliate_request.${request.status}` });
  const seededInvites = new Set(truth.merchant.seededInvites);
  for (const invite of truth.invites)
    if (!seededInvites.has(invite.email) && invite.notified_at) events.push({ id: `evt_invite_${invite.uuid}_sent`, type: 'invite.sent' });
  return events;
};

const subscribes = (endpoint: SoakEndpoint, type: string) => endpoint.events === undefined || endpoint.events.includes(type);
const isUp = (hit: Hit) => typeof hit.answered === 'number' && hit.answered >= 200 && hit.answered < 300;

const hitsById = (hits: readonly Hit[]) => {
  const byId = new Map<string, Hit[]>();
  for (const hit of hits) {
    const list = byId.get(hit.webhookId);
    if (list) list.push(hit);
    else byId.set(hit.webhookId, [hit]);
  }
  return byId;
};

/** An endpoint the soak means to stay enabled (every behaviour but 410). */
const meantToStay = (endpoint: SoakEndpoint) => endpoint.receiver.behaviour !== 'gone';

// ---------------------------------------------------------------------------------------------
const checkDelivered = (input: AsyncInput, expected: Map<string, Expected[]>): InvariantResult => {
  const out = result(
    'webhooks-delivered',
    'every event reached every subscribed, enabled, non-410 endpoint that was up, and every delivery verified (standardwebhooks)',
  );
  for (const endpoint of input.endpoints) {
    const label = `${where(endpoint.merchant)} endpoint ${endpoint.receiver.name}`;
    const unverified = endpoint.receiver.hits.filter((hit) => !hit.verified).length;
    if (unverified > 0) out.violations.push(`${label}: ${unverified} requests did not verify with the endpoint's secret`);
    const state = input.states.get(endpoint.uuid);
    if (!meantToStay(endpoint) || state?.enabled !== true) {
      if (meantToStay(endpoint)) note(out, 'endpoints left out: disabled (see endpoints-enabled)');
      continue;
    }
    const byId = hitsById(endpoint.receiver.hits);
    const missing: string[] = [];
    for (const event of expected.get(endpoint.merchant.key) ?? []) {
      if (!subscribes(endpoint, event.type)) continue;
      out.checked++;
      const hits = byId.get(event.id) ?? [];
      if (hits.some(isUp)) continue;
      if (hits.length >= input.scheduleAttempts) note(out, 'events given up after every attempt of the schedule met the endpoint down');
      else missing.push(`${event.id} (${event.type}: ${hits.length} attempts, ${hits.map((hit) => hit.answered).join('/') || 'none'})`);
    }
    if (missing.length > 0)
      out.violations.push(`${label}: ${missing.length} events never delivered, e.g. ${missing.slice(0, 3).join('; ')}`);
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
const checkEnabled = (input: AsyncInput): InvariantResult => {
  const out = result(
    'endpoints-enabled',
    'no endpoint disabled by an outage shorter than the retry schedule; an endpoint answering 410 disabled at once',
  );
  for (const endpoint of input.endpoints) {
    out.checked++;
    const state = input.states.get(endpoint.uuid);
    const label = `${where(endpoint.merchant)} endpoint ${endpoint.receiver.name}`;
    if (!state || state.failed || state.enabled === undefined) {
      out.violations.push(`${label}: could not be read (${state?.failed ?? 'no answer'})`);
      continue;
    }
    if (meantToStay(endpoint) && !state.enabled) {
      const failures = endpoint.receiver.hits.filter((hit) => !isUp(hit)).length;
      out.violations.push(`${label}: disabled (${state.disabledReason ?? 'no reason'}) after ${failures} failed requests`);
    }
    if (!meantToStay(endpoint)) {
      if (state.enabled || !/410/.test(state.disabledReason ?? ''))
        out.violations.push(`${label}: answered 410, but is ${state.enabled ? 'enabled' : `disabled for: ${state.disabledReason}`}`);
      const what = 'requests a 410 endpoint got (the first, and those already in flight when it was disabled)';
      out.notes.set(what, (out.notes.get(what) ?? 0) + endpoint.receiver.hits.length);
    }
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
type Created = { op: Op; merchant: SoakMerchant; uuid: string; at: number };

/** Orders answered 201 (workload creates), with the time of that answer. */
const createdOrders = (ops: readonly Op[]): Created[] =>
  ops.flatMap((op) => {
    const last = op.attempts.at(-1);
    if (!CREATES.has(op.kind) || finalStatus(op) !== 201 || !op.createdUuid || !last) return [];
    return [{ op, merchant: op.merchant, uuid: op.createdUuid, at: last.at }];
  });

const figures = (values: number[], missing: number): LagFigures => ({
  count: values.length,
  p50: percentile(values, 50),
  p99: percentile(values, 99),
  max: values.length === 0 ? Number.NaN : Math.max(...values),
  missing,
});

/**
 * The change feed's lag for one order: from its 201 to the first sign of its `order.created` out
 * of the feed, the earliest of a delivery attempt at any endpoint of its merchant (whatever it
 * answered) and its commission's accrual being booked. Two ways out, so one deliverer or consumer
 * stopped by a fault (its message back after the visibility timeout) does not count as the feed.
 */
const lagsOf = (input: AsyncInput) => {
  const endpointsOf = new Map<string, SoakEndpoint[]>();
  for (const endpoint of input.endpoints)
    endpointsOf.set(endpoint.merchant.key, [...(endpointsOf.get(endpoint.merchant.key) ?? []), endpoint]);
  const truthOf = new Map(input.truths.map((truth) => [truth.merchant.key, truth]));
  const firstHit = new Map<SoakEndpoint, Map<string, { any: number; ok?: number }>>();
  for (const endpoint of input.endpoints) {
    const firsts = new Map<string, { any: number; ok?: number }>();
    for (const hit of endpoint.receiver.hits) {
      const first = firsts.get(hit.webhookId) ?? { any: hit.at };
      first.any = Math.min(first.any, hit.at);
      if (isUp(hit)) first.ok = Math.min(first.ok ?? hit.at, hit.at);
      firsts.set(hit.webhookId, first);
    }
    firstHit.set(endpoint, firsts);
  }
  return createdOrders(input.ops).map((created) => {
    const id = `evt_${created.uuid}_v1`;
    const endpoints = endpointsOf.get(created.merchant.key) ?? [];
    const accrual = truthOf
      .get(created.merchant.key)
      ?.ledgers.get(created.uuid)
      ?.entries.find((entry) => entry.type === 'accrual');
    const booked = accrual ? Date.parse(accrual.at) : undefined;
    const attempts = endpoints.map((endpoint) => firstHit.get(endpoint)?.get(id)?.any).filter((at): at is number => at !== undefined);
    const delivered = endpoints
      .filter((endpoint) => endpoint.receiver.behaviour === 'ok')
      .map((endpoint) => firstHit.get(endpoint)?.get(id)?.ok)
      .filter((at): at is number => at !== undefined);
    const seconds = (at: number | undefined) => (at === undefined ? undefined : Math.max(0, at - created.at) / 1000);
    const byBehaviour = endpoints
      .filter((endpoint) => endpoint.receiver.behaviour !== 'gone')
      .map((endpoint) => ({ behaviour: endpoint.receiver.behaviour, lag: seconds(firstHit.get(endpoint)?.get(id)?.ok) }));
    const feedAt = [...attempts, ...(booked === undefined ? [] : [booked])];
    return {
      created,
      profile: endpoints[0]?.profile,
      feed: seconds(feedAt.length === 0 ? undefined : Math.min(...feedAt)),
      delivery: seconds(delivered.length === 0 ? undefined : Math.min(...delivered)),
      commission: seconds(booked),
      byBehaviour,
    };
  });
};

const checkLag = (input: AsyncInput, lags: ReturnType<typeof lagsOf>): InvariantResult => {
  const out = result(
    'feed-lag',
    `the change feed within ${input.maxLagSeconds} s of every order's 201 for a healthy merchant (its order.created attempted or its commission booked)`,
  );
  for (const lag of lags) {
    if (lag.profile !== 'healthy') continue;
    out.checked++;
    const label = `${where(lag.created.merchant)} order ${lag.created.uuid} (op ${lag.created.op.id}${lag.created.op.text ? `, ${lag.created.op.text}` : ''})`;
    if (lag.feed === undefined) out.violations.push(`${label}: never left the change feed (no delivery attempt, no commission)`);
    else if (lag.feed > input.maxLagSeconds) out.violations.push(`${label}: left the change feed ${lag.feed.toFixed(1)} s after its 201`);
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
/**
 * Its ledger exists with an accrual; an order cancelled before the consumer read it may have a
 * void ledger without one (the consumer reads the order itself, so it books the state it finds).
 */
const checkCommissions = (input: AsyncInput): InvariantResult => {
  const out = result('commission', 'every order answered 201 got its commission booked (or, cancelled before that, a void ledger)');
  const truthOf = new Map(input.truths.map((truth) => [truth.merchant.key, truth]));
  for (const created of createdOrders(input.ops)) {
    out.checked++;
    const truth = truthOf.get(created.merchant.key);
    const ledger = truth?.ledgers.get(created.uuid);
    const cancelled = truth?.orders.find((order) => order.uuid === created.uuid)?.cancelled_at !== undefined;
    const accrued = ledger?.entries.some((entry) => entry.type === 'accrual');
    if (ledger && !accrued && cancelled) note(out, 'orders cancelled before their commission was booked (void ledger, no accrual)');
    else if (!accrued)
      out.violations.push(
        `${where(created.merchant)} order ${created.uuid} (${created.op.text ?? 'plain'}, answered 201 at ${new Date(created.at).toISOString()}): ${ledger ? 'no accrual' : 'no commission ledger'}`,
      );
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
/** The texts a create sent, trimmed as the API trims them, in the digest's shape. */
const sentTexts = (op: Op) => {
  const body = record(JSON.parse(op.request.body ?? '{}'));
  const trim = (value: unknown) => {
    if (typeof value !== 'string') return null;
    const trimmed = value.trim();
    return trimmed === '' ? null : trimmed;
  };
  const rows = Array.isArray(body.order_rows) ? body.order_rows.map(record) : [];
  return {
    order_no: trim(body.order_no),
    customer: body.customer ? { name: trim(record(body.customer).name) } : null,
    order_rows: rows.map((row) => ({
      product_name: trim(row.product_name),
      product_sku: trim(row.product_sku),
      segment_slug: trim(row.segment_slug),
    })),
  };
};

/** A refusal names its reason: a 422 keyed by field, or a message. */
const namesReason = (op: Op) => {
  const body = op.attempts.at(-1)?.body;
  try {
    const json = record(JSON.parse(body ?? ''));
    return Object.keys(record(json.errors)).length > 0 || (typeof json.message === 'string' && json.message.length > 0);
  } catch {
    return false;
  }
};

const checkTexts = (input: AsyncInput): InvariantResult => {
  const out = result(
    'texts',
    'odd and largest texts: 201, stored and delivered as sent (or, over the storage limit, 413/422 naming the reason); order events carry the stored texts',
  );
  const truthOf = new Map(input.truths.map((truth) => [truth.merchant.key, truth]));
  for (const op of input.ops) {
    if (!op.text || !CREATES.has(op.kind)) continue;
    out.checked++;
    const status = finalStatus(op);
    const label = `${where(op.merchant)} op ${op.id} ${op.kind} ${op.text}`;
    if (status === 201) {
      const order = truthOf.get(op.merchant.key)?.orders.find((candidate) => candidate.uuid === op.createdUuid);
      if (!order) continue; // orders-once reports it
      if (orderTextDigest(order) !== orderTextDigest(sentTexts(op))) out.violations.push(`${label}: stored texts differ from those sent`);
    } else if (status === 422 && !op.refusable && !isKeyed(op) && hadAmbiguousAttempt(op)) {
      // The spec's answer to an unkeyed retry whose first attempt was applied ("taken"): that order holds the texts sent.
      const sent = sentTexts(op);
      const order = truthOf.get(op.merchant.key)?.orders.find((candidate) => candidate.order_no === sent.order_no);
      if (order === undefined) out.violations.push(`${label}: 422 after an ambiguous attempt, and no order with its order_no`);
      else if (orderTextDigest(order) !== orderTextDigest(sent)) out.violations.push(`${label}: stored texts differ from those sent`);
      else note(out, 'unkeyed retries told 422 (taken) after an applied attempt, their order holding the texts sent');
    } else if (op.refusable && (status === 413 || status === 422)) {
      if (namesReason(op)) note(out, `largest bodies refused as too large to store (${status})`);
      else out.violations.push(`${label}: ${status} without a reason: ${op.attempts.at(-1)?.body?.slice(0, 160)}`);
    } else if (typeof status === 'number' && status < 500 && status !== 413 && status !== 422) {
      out.violations.push(`${label}: ${status}`);
    } else
      out.violations.push(
        `${label}: ${status}${op.refusable ? ' (too large to store: 413 or 422 naming the reason, never a 5xx)' : ''}: ${op.attempts.at(-1)?.body?.slice(0, 160) ?? ''}`,
      );
  }
  // Every order event delivered carries the order's texts as stored (they never change after the create).
  const digests = new Map(input.truths.flatMap((truth) => truth.orders.map((order) => [order.uuid, orderTextDigest(order)] as const)));
  for (const endpoint of input.endpoints) {
    let differing = 0;
    for (const hit of endpoint.receiver.hits) {
      const uuid = /^evt_([0-9a-f-]{36})_v\d+$/.exec(hit.webhookId)?.[1];
      if (!uuid || hit.digest === undefined) continue;
      out.checked++;
      if (digests.get(uuid) !== hit.digest) differing++;
    }
    if (differing > 0)
      out.violations.push(
        `${where(endpoint.merchant)} endpoint ${endpoint.receiver.name}: ${differing} order events whose texts differ from the stored order`,
      );
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
const tallyReceivers = (endpoints: readonly SoakEndpoint[]) => {
  const tally = {} as AsyncFigures['receivers'];
  for (const endpoint of endpoints) {
    const row = tally[endpoint.receiver.behaviour] ?? { endpoints: 0, requests: 0, ok: 0, hung: 0, verified: 0 };
    tally[endpoint.receiver.behaviour] = row;
    row.endpoints++;
    for (const hit of endpoint.receiver.hits) {
      row.requests++;
      if (isUp(hit)) row.ok++;
      if (hit.answered === 'hung') row.hung++;
      if (hit.verified) row.verified++;
    }
  }
  return tally;
};

const tallyTexts = (ops: readonly Op[]) => {
  const texts: AsyncFigures['texts'] = {};
  for (const op of ops) {
    if (!op.text || !CREATES.has(op.kind)) continue;
    const row = texts[op.text] ?? {};
    texts[op.text] = row;
    const status = String(finalStatus(op));
    row[status] = (row[status] ?? 0) + 1;
  }
  return texts;
};

export const ASYNC_INVARIANT_ORDER = ['webhooks-delivered', 'endpoints-enabled', 'feed-lag', 'commission', 'texts'] as const;

/** The asynchronous side's invariants, and its figures. */
export const checkAsync = (input: AsyncInput): { invariants: InvariantResult[]; figures: AsyncFigures } => {
  const expected = new Map(input.truths.map((truth) => [truth.merchant.key, expectedEvents(truth)]));
  const lags = lagsOf(input);
  const byProfile = {} as AsyncFigures['lags'];
  const profiles = [...new Set(input.endpoints.map((endpoint) => endpoint.profile))];
  for (const profile of profiles) {
    const of = lags.filter((lag) => lag.profile === profile);
    const pick = (field: 'feed' | 'delivery' | 'commission') => {
      const values = of.map((lag) => lag[field]).filter((value): value is number => value !== undefined);
      return figures(values, of.length - values.length);
    };
    byProfile[profile] = { feed: pick('feed'), delivery: pick('delivery'), commission: pick('commission') };
  }
  const deliveryByBehaviour: AsyncFigures['deliveryByBehaviour'] = {};
  for (const behaviour of new Set(input.endpoints.map((endpoint) => endpoint.receiver.behaviour))) {
    const of = lags.flatMap((lag) => lag.byBehaviour.filter((entry) => entry.behaviour === behaviour));
    if (of.length === 0) continue;
    const values = of.map((entry) => entry.lag).filter((value): value is number => value !== undefined);
    deliveryByBehaviour[behaviour] = figures(values, of.length - values.length);
  }
  return {
    invariants: [checkDelivered(input, expected), checkEnabled(input), checkLag(input, lags), checkCommissions(input), checkTexts(input)],
    figures: { lags: byProfile, deliveryByBehaviour, receivers: tallyReceivers(input.endpoints), texts: tallyTexts(input.ops) },
  };
};
