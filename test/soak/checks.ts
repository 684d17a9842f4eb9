import type { AffiliateItem } from '#shared/db/entities/affiliate';
import type { CommissionLedger } from '#shared/db/entities/commission';
import type { OrderItem } from '#shared/db/entities/order';
import type { SegmentItem } from '#shared/db/entities/segment';
import { rowCommission } from '#shared/money';
import { isRetryable } from './client';
import type { SoakMerchant } from './fixtures';
import { createdUuidOf, definitiveAttempts, finalStatus, hadAmbiguousAttempt, isKeyed, type Op } from './ops';
import { PROBE_SHIPPING_BASE } from './plan';
import type { MerchantTruth } from './truth';

/**
 * The invariants of "Correct on DynamoDB as it really behaves", each checked in one function
 * below against what the operations were told (the op log) and what the tables hold (the truth).
 * A violation is one line saying what and where; a note is something counted and reported that
 * is not a violation (an order created behind an unkeyed 503, a retry budget spent).
 */

export type InvariantResult = { id: string; title: string; checked: number; violations: string[]; notes: Map<string, number> };

type Context = {
  ops: readonly Op[];
  truths: readonly MerchantTruth[];
  /** Operations by the caller's merchant key. */
  opsOf: Map<string, Op[]>;
};

const result = (id: string, title: string): InvariantResult => ({ id, title, checked: 0, violations: [], notes: new Map() });
const note = (into: InvariantResult, what: string) => into.notes.set(what, (into.notes.get(what) ?? 0) + 1);
const groupBy = <T, K>(items: readonly T[], keyOf: (item: T) => K | undefined) => {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    if (key === undefined) continue;
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
};

/** The kind an operation acts as: a replay acts as its original. */
const actsAs = (op: Op) => op.replayOf?.kind ?? op.kind;
const CREATES = new Set(['create-v2', 'create-legacy', 'create-duplicate']);
/** Operations that do something new (a fresh order_no, a pending request, a new e-mail...): a 422 is never right for them. */
const FRESH_ACTIONS = new Set(['create-v2', 'create-legacy', 'cancel', 'invite', 'accept', 'decline']);
const bodyOf = (op: Op) => {
  const body = definitiveAttempts(op).at(-1)?.body;
  try {
    return body === undefined ? undefined : (JSON.parse(body) as unknown);
  } catch {
    return undefined;
  }
};
/** Where two bodies part, shown briefly ('' when they are the same). */
const bodyDifference = (a = '', b = '') => {
  if (a === b) return '';
  const withoutTrace = (text: string) => {
    try {
      const body = JSON.parse(text) as { meta?: { trace_id?: unknown } };
      if (body.meta) delete body.meta.trace_id;
      return JSON.stringify(body);
    } catch {
      return text;
    }
  };
  if (withoutTrace(a) === withoutTrace(b)) return ' with the same body but another meta.trace_id (the request ran again)';
  let at = 0;
  while (at < a.length && a[at] === b[at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 30), at + 50));
  return ` with another body, from character ${at}: ${around(a)} vs ${around(b)}`;
};
const where = (merchant: SoakMerchant) => `${merchant.key} (${merchant.stage})`;
const statusList = (op: Op) => op.attempts.map((attempt) => attempt.status).join('→');

// ---------------------------------------------------------------------------------------------
/**
 * 1. Every order answered 201 exists exactly once (the uuid answered, with its order_no, and no
 * second order of that order_no); every order that exists was answered 201 to some request, or
 * was created behind an ambiguous answer (503, 502, the client's timeout): with a key, the retry
 * must then have answered 201; without one, it is counted and reported, not lost.
 */
const checkOrdersOnce = (context: Context): InvariantResult => {
  const out = result(
    'orders-once',
    'every order answered 201 exists exactly once; every stored order was answered 201 (or created behind an unkeyed 503: noted)',
  );
  for (const truth of context.truths) {
    const ops = (context.opsOf.get(truth.merchant.key) ?? []).filter((op) => CREATES.has(actsAs(op)) && op.kind !== 'probe');
    const stored = groupBy(truth.orders, (order) => order.order_no);
    const byUuid = new Map(truth.orders.map((order) => [order.uuid, order]));
    const opsByOrderNo = groupBy(ops, (op) => op.orderNo);
    for (const op of ops) {
      if (finalStatus(op) !== 201) continue;
      out.checked++;
      const uuid = op.createdUuid ?? createdUuidOf(bodyOf(op));
      const order = uuid === undefined ? undefined : byUuid.get(uuid);
      if (!order)
        out.violations.push(
          `${where(truth.merchant)} op ${op.id} (${op.kind} ${op.orderNo}) answered 201 with ${uuid}: no such order stored`,
        );
      else if (order.order_no !== op.orderNo)
        out.violations.push(
          `${where(truth.merchant)} op ${op.id} answered 201 with ${uuid}, which is order ${order.order_no}, not ${op.orderNo}`,
        );
      if (actsAs(op) === 'create-duplicate')
        out.violations.push(`${where(truth.merchant)} op ${op.id}: a create with the taken order_no ${op.orderNo} answered 201`);
    }
    const seeded = new Set(truth.merchant.seededOrders.map((order) => order.orderNo));
    for (const [orderNo, orders] of stored) {
      out.checked++;
      if (orders.length > 1) out.violations.push(`${where(truth.merchant)} order_no ${orderNo} is stored ${orders.length} times`);
      if (seeded.has(orderNo)) continue;
      for (const order of orders) explainStoredOrder(out, truth.merchant, order, opsByOrderNo.get(orderNo) ?? []);
    }
  }
  return out;
};

/** Why a stored order exists: a 201 named it, or an ambiguous answer may have created it. */
const explainStoredOrder = (out: InvariantResult, merchant: SoakMerchant, order: OrderItem, ops: readonly Op[]) => {
  const answered = ops.some((op) => finalStatus(op) === 201 && (op.createdUuid ?? createdUuidOf(bodyOf(op))) === order.uuid);
  if (answered) return;
  const creators = ops.filter((op) => actsAs(op) !== 'create-duplicate');
  const unkeyedAmbiguous = creators.some((op) => !isKeyed(op) && hadAmbiguousAttempt(op));
  const keyedUnresolved = creators.some((op) => isKeyed(op) && isRetryable(finalStatus(op)));
  if (unkeyedAmbiguous) note(out, 'orders created behind an ambiguous answer to a request without a key');
  else if (keyedUnresolved) note(out, 'orders created by a keyed request whose retries ran out of budget');
  else
    out.violations.push(
      `${where(merchant)} order ${order.uuid} (${order.order_no}) is stored, but no request was answered 201 for it (${creators.map((op) => `op ${op.id}: ${statusList(op)}`).join('; ') || 'no request sent that order_no'})`,
    );
};

// ---------------------------------------------------------------------------------------------
/**
 * 2. Every retry with the same Idempotency-Key (the client's own retries and deliberate replays)
 * got the original status and body, byte for byte; a keyed request for a fresh action (a new
 * order_no, a pending request, an uncancelled order, a new e-mail) is never told 422 after an
 * ambiguous attempt: that would be "taken" for its own order.
 */
const checkIdempotency = (context: Context): InvariantResult => {
  const out = result(
    'idempotency',
    'every retry with the same Idempotency-Key got the original status and body, never a 422 for its own change',
  );
  for (const truth of context.truths) {
    const keyed = (context.opsOf.get(truth.merchant.key) ?? []).filter((op) => isKeyed(op) && op.kind !== 'probe');
    for (const [key, group] of groupBy(keyed, (op) => op.request.idempotencyKey)) {
      out.checked++;
      // A 5xx is never stored (a retry runs again), and is a violation of its own (no-500): only 2xx-4xx answers must repeat.
      const answers = group.flatMap((op) =>
        definitiveAttempts(op)
          .filter((attempt) => typeof attempt.status === 'number' && attempt.status < 500)
          .map((attempt) => ({ op, attempt })),
      );
      const first = answers[0];
      if (!first) {
        note(out, 'keyed operations that never got a final answer (retry budget spent)');
        continue;
      }
      const differing = answers.find(({ attempt }) => attempt.status !== first.attempt.status || attempt.body !== first.attempt.body);
      if (differing)
        out.violations.push(
          `${where(truth.merchant)} key ${key} (${actsAs(first.op)}): op ${first.op.id} was told ${first.attempt.status}${first.attempt.replayed ? ' (replayed)' : ''}, op ${differing.op.id}${differing.op.kind === 'replay' ? ' (replay)' : ''} ${differing.attempt.status}${differing.attempt.replayed ? ' (replayed)' : ''}${bodyDifference(first.attempt.body, differing.attempt.body)}`,
        );
      const original = group[0] as Op;
      const retried = group.some((op) => op.attempts.length > 1) || group.length > 1;
      if (FRESH_ACTIONS.has(original.kind) && first.attempt.status === 422 && retried && hadAmbiguousAttempt(original))
        out.violations.push(
          `${where(truth.merchant)} key ${key}: ${original.kind} op ${original.id} was told 422 after an ambiguous attempt (${statusList(original)}): ${first.attempt.body?.slice(0, 160)}`,
        );
      if (group.some((op) => op.attempts.some((attempt) => attempt.status === 409)))
        note(out, 'keyed operations told 409 (in flight) at least once');
    }
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
/**
 * 3. Every list's total equals its items, once the count repair had its time: meta.pagination.total
 * of every page equals the number of items the table holds for the list, and the pages show each
 * of them exactly once.
 */
const checkLists = (context: Context): InvariantResult => {
  const out = result('lists', 'every list total equals its items (after the count repair ran)');
  for (const truth of context.truths) {
    for (const list of truth.lists) {
      out.checked++;
      const prefix = `${where(truth.merchant)} ${list.name}`;
      if (list.failed) {
        out.violations.push(`${prefix}: could not be read (${list.failed})`);
        continue;
      }
      const expected = new Set(list.expected);
      const shown = new Set(list.ids);
      const wrongTotals = [...new Set(list.totals.filter((total) => total !== expected.size))];
      const missing = list.expected.filter((id) => !shown.has(id)).length;
      const extra = [...shown].filter((id) => !expected.has(id)).length;
      const duplicates = list.ids.length - shown.size;
      if (wrongTotals.length > 0 || missing > 0 || extra > 0 || duplicates > 0)
        out.violations.push(
          `${prefix}: total ${wrongTotals.join('/') || expected.size}, ${expected.size} items stored; pages missed ${missing}, showed ${extra} not stored, ${duplicates} twice${list.counts ? `; its counts: ${list.counts.join('; ')}` : ''}`,
        );
    }
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
/**
 * 4. Every order's commission ledger matches its final state, each event applied once: the
 * ledger is at the order's version; every version appears once (accrual for 1, a shipping_change
 * for each PATCH version, a reversal for the cancel); the accrual is the commission of the order
 * (rows by segment, rate by the affiliate's tier); a cancelled order is void with net 0, one
 * that is not is pending with net = accrual; and there are at least as many shipping changes as
 * PATCHes answered 200.
 */
const checkLedgers = (context: Context): InvariantResult => {
  const out = result('ledger', 'every order commission ledger matches its final state, each event applied once');
  for (const truth of context.truths) {
    const patches = groupBy(
      (context.opsOf.get(truth.merchant.key) ?? []).filter((op) => op.kind === 'patch' && finalStatus(op) === 200),
      (op) => op.orderUuid,
    );
    const seeded = new Set(truth.merchant.seededOrders.map((order) => order.uuid));
    for (const order of truth.orders) {
      const version = order.version ?? 1;
      const ledger = truth.ledgers.get(order.uuid);
      // A seeded order is history: never queued, so it has a ledger only once it changed.
      if (seeded.has(order.uuid) && version === 1 && !ledger) continue;
      out.checked++;
      const problem = ledgerProblem(
        order,
        ledger,
        expectedAccrual(order, truth.segments, truth.affiliates),
        patches.get(order.uuid)?.length ?? 0,
      );
      if (problem)
        out.violations.push(
          `${where(truth.merchant)} order ${order.uuid} (${order.order_no}, v${version}${order.cancelled_at ? ', cancelled' : ''}): ${problem}`,
        );
    }
  }
  return out;
};

/** The commission the order accrues, computed here independently of the consumer (shared/domain/commissions.ts states the rule). */
const expectedAccrual = (order: OrderItem, segments: readonly SegmentItem[], affiliates: readonly AffiliateItem[]) => {
  const tier = affiliates.find((affiliate) => affiliate.slug === order.affiliate_slug)?.tier_slug ?? null;
  const fallback = segments.find((segment) => segment.is_default);
  return order.order_rows.reduce((sum, row) => {
    const slug = row.segment_slug?.toLowerCase();
    const segment = segments.find((candidate) => slug !== undefined && candidate.slugs.some((s) => s.toLowerCase() === slug)) ?? fallback;
    const rate = tier !== null && segment && Object.hasOwn(segment.rates, tier) ? (segment.rates[tier] ?? 0) : 0;
    return sum + rowCommission(row.price_value, row.quantity, rate).amount;
  }, 0);
};

/** What is wrong with an order's ledger, if anything. */
const ledgerProblem = (order: OrderItem, ledger: CommissionLedger | undefined, accrual: number, patched: number): string | undefined => {
  const version = order.version ?? 1;
  const cancelled = order.cancelled_at !== undefined;
  if (!ledger) return 'no commission ledger';
  if (ledger.applied_version !== version) return `ledger applied up to v${ledger.applied_version}, order is at v${version}`;
  const versions = ledger.entries.map((entry) => entry.version);
  if (new Set(versions).size !== versions.length) return `an event applied twice (entry versions ${versions.join(',')})`;
  const of = (type: string) => ledger.entries.filter((entry) => entry.type === type);
  const [accruals, reversals, shipping] = [of('accrual'), of('reversal'), of('shipping_change')];
  const lastShipping = cancelled ? version - 1 : version;
  const shippingVersions = shipping.map((entry) => entry.version).join(',');
  const wantShipping = Array.from({ length: Math.max(0, lastShipping - 1) }, (_, index) => index + 2).join(',');
  if (shippingVersions !== wantShipping) return `shipping changes at versions [${shippingVersions}], expected [${wantShipping}]`;
  if (shipping.length < patched) return `${shipping.length} shipping changes for ${patched} PATCHes answered 200`;
  if (accruals.length > 1 || reversals.length > 1) return `${accruals.length} accruals and ${reversals.length} reversals`;
  const accrued = accruals[0];
  if (accrued && (accrued.version !== 1 || accrued.amount !== accrual))
    return `accrual ${accrued.amount} at v${accrued.version}, expected ${accrual} at v1`;
  if (!cancelled) {
    if (!accrued) return 'no accrual for an order that is not cancelled';
    if (reversals.length > 0) return 'a reversal on an order that is not cancelled';
    if (ledger.status !== 'pending' || ledger.net_amount !== accrual)
      return `status ${ledger.status}, net ${ledger.net_amount}, expected pending, ${accrual}`;
    return undefined;
  }
  const reversal = reversals[0];
  if (accrued && (!reversal || reversal.version !== version || reversal.amount !== -accrual))
    return `cancelled after an accrual of ${accrual}: reversal ${reversal ? `${reversal.amount} at v${reversal.version}` : 'missing'}, expected ${-accrual} at v${version}`;
  if (!accrued && reversal) return 'a reversal without an accrual';
  if (ledger.status !== 'void' || ledger.net_amount !== 0) return `status ${ledger.status}, net ${ledger.net_amount}, expected void, 0`;
  return undefined;
};

// ---------------------------------------------------------------------------------------------
/**
 * 5. No 500 at all: a transient failure is a 503 with Retry-After (a 409 in flight and a 429 carry
 * it too). A 502 is API Gateway's answer for a function that stopped (the `stop` fault): counted,
 * not a violation. Any other 5xx is one.
 */
const checkNo500 = (context: Context): InvariantResult => {
  const out = result('no-500', 'no 500: a transient failure is a 503 with Retry-After');
  for (const op of context.ops) {
    for (const attempt of op.attempts) {
      out.checked++;
      const { status } = attempt;
      if (typeof status !== 'number') continue;
      const label = `${where(op.merchant)} op ${op.id} ${op.request.method} ${op.request.path}`;
      if (status >= 500 && status !== 502 && status !== 503)
        out.violations.push(`${label}: ${status} ${attempt.body?.slice(0, 200) ?? ''}`);
      if ([503, 409, 429].includes(status) && !attempt.retryAfter) out.violations.push(`${label}: ${status} without Retry-After`);
      if (status === 502) note(out, '502 (a function stopped by the `stop` fault)');
    }
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
const SEEN_KINDS = ['orders', 'requests', 'affiliates', 'invites'] as const;

/** Whose each id is, by resource (affiliates by slug: every slug carries its merchant's name). */
const ownersOf = (truths: readonly MerchantTruth[]) => {
  const owners = Object.fromEntries(SEEN_KINDS.map((kind) => [kind, new Map<string, string>()])) as Record<
    (typeof SEEN_KINDS)[number],
    Map<string, string>
  >;
  for (const { merchant, orders, requests, affiliates, invites } of truths) {
    for (const order of orders) owners.orders.set(order.uuid, merchant.key);
    for (const request of requests) owners.requests.set(request.uuid, merchant.key);
    for (const affiliate of affiliates) owners.affiliates.set(affiliate.slug, merchant.key);
    for (const invite of invites) owners.invites.set(invite.uuid, merchant.key);
  }
  return owners;
};

/**
 * 6. Nothing of one merchant visible to or changed by another: every probe with another
 * merchant's uuid or slug (same stage, or the other stage) is a 404; every id an answer showed
 * belongs to the caller; no order carries a shipping value only probes sent; and (with the state
 * check) nothing a probe targeted changed unless its owner changed it.
 */
const checkIsolation = (context: Context): InvariantResult => {
  const out = result('isolation', 'nothing of one merchant visible to or changed by another');
  const owners = ownersOf(context.truths);
  for (const op of context.ops) {
    if (op.kind === 'probe') {
      out.checked++;
      const status = finalStatus(op);
      if (isRetryable(status)) note(out, 'probes without a final answer (retry budget spent)');
      else if (typeof status === 'number' && status >= 500) note(out, 'probes answered 5xx (counted by no-500)');
      else if (status !== 404)
        out.violations.push(
          `${where(op.merchant)} op ${op.id} ${op.request.method} ${op.request.path} on ${op.owner ? where(op.owner) : '?'}'s resource: ${status}`,
        );
      continue;
    }
    for (const kind of SEEN_KINDS) {
      for (const id of op.seen[kind]) {
        out.checked++;
        const owner = owners[kind].get(id);
        if (owner === undefined) note(out, 'ids shown that no table holds any more');
        else if (owner !== op.merchant.key)
          out.violations.push(`${where(op.merchant)} op ${op.id} ${op.request.path} showed ${kind} ${id}, which is ${owner}'s`);
      }
    }
  }
  for (const truth of context.truths) {
    for (const order of truth.orders) {
      if (order.total_shipping_value >= PROBE_SHIPPING_BASE)
        out.violations.push(
          `${where(truth.merchant)} order ${order.uuid} has shipping ${order.total_shipping_value}, a value only another merchant's PATCH sent`,
        );
    }
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
/**
 * 7. The final state is what the answers said: an order is cancelled iff its cancel was answered
 * 200 (either way after an ambiguous one), its shipping is the last PATCH answered 200 (or an
 * ambiguous later one); a request is decided iff its decision was answered 200; an accepted
 * request has an active affiliate; an invite exists once iff it was answered 200. Fresh actions
 * answered 422 without an ambiguous attempt, and refusals answered 2xx, are violations too.
 * A change with no own request behind it, but a probe, counts against isolation.
 */
const checkState = (context: Context, isolation: InvariantResult): InvariantResult => {
  const out = result('state', 'the final state of every order, request and invite is what the answers said');
  for (const truth of context.truths) {
    const ops = context.opsOf.get(truth.merchant.key) ?? [];
    const probes = context.ops.filter((op) => op.kind === 'probe' && op.owner?.key === truth.merchant.key);
    checkAnswers(out, truth.merchant, ops);
    checkOrderStates(out, isolation, truth, ops, probes);
    checkRequestStates(out, isolation, truth, ops, probes);
    checkInviteStates(out, truth, ops);
  }
  return out;
};

/** A fresh action refused without an ambiguous attempt, or a refusal (expected 422) accepted. */
const checkAnswers = (out: InvariantResult, merchant: SoakMerchant, ops: readonly Op[]) => {
  for (const op of ops) {
    if (op.kind === 'probe' || op.kind === 'final-read' || op.kind === 'replay') continue;
    const status = finalStatus(op);
    // Too large to store: a reasoned 413 or 422 is right (async-checks.ts, texts, checks the reason).
    if (op.refusable && (status === 413 || status === 422)) continue;
    if (FRESH_ACTIONS.has(op.kind) && status === 422) {
      if (hadAmbiguousAttempt(op)) {
        if (!isKeyed(op)) note(out, 'unkeyed retries told 422 after an ambiguous attempt (the first one was applied)');
      } else
        out.violations.push(
          `${where(merchant)} op ${op.id} ${op.kind}: 422 without an earlier attempt: ${bodyOf(op) ? JSON.stringify(bodyOf(op)).slice(0, 160) : ''}`,
        );
    }
    if (op.expect === 422 && typeof status === 'number' && status < 300)
      out.violations.push(`${where(merchant)} op ${op.id} ${op.kind} ${op.request.path}: ${status}, expected 422`);
    if (op.kind === 'get-order' && status === 404)
      out.violations.push(`${where(merchant)} op ${op.id}: GET of an order answered 201 before: 404`);
  }
};

/** The values an order's field may finally hold, given the writes of it in order. */
const possibleAfter = (initial: unknown, writes: readonly Op[], written: (op: Op) => unknown) => {
  let possible = new Set([initial]);
  for (const op of writes) {
    if (finalStatus(op) === 200) possible = new Set([written(op)]);
    else if (hadAmbiguousAttempt(op)) possible.add(written(op));
  }
  return possible;
};

const checkOrderStates = (
  out: InvariantResult,
  isolation: InvariantResult,
  truth: MerchantTruth,
  ops: readonly Op[],
  probes: readonly Op[],
) => {
  const byTarget = groupBy(ops, (op) => op.orderUuid);
  const createOf = new Map(ops.filter((op) => CREATES.has(op.kind) && op.shipping !== undefined).map((op) => [op.orderNo, op]));
  const seeded = new Map(truth.merchant.seededOrders.map((order) => [order.uuid, order]));
  for (const order of truth.orders) {
    const initial = seeded.get(order.uuid)?.shipping ?? createOf.get(order.order_no)?.shipping;
    if (initial === undefined) continue; // not an order of the workload (reported by orders-once)
    out.checked++;
    const targeting = byTarget.get(order.uuid) ?? [];
    const cancels = targeting.filter((op) => actsAs(op) === 'cancel' || actsAs(op) === 'cancel-refused');
    const cancelled = possibleAfter(false, cancels, () => true);
    const label = `${where(truth.merchant)} order ${order.uuid} (${order.order_no})`;
    if (!cancelled.has(order.cancelled_at !== undefined)) {
      const probed = probes.some((probe) => probe.orderUuid === order.uuid && probe.request.path.endsWith('/cancel'));
      (probed && order.cancelled_at ? isolation : out).violations.push(
        `${label}: cancelled_at ${order.cancelled_at ?? 'null'}, but its cancels were told ${cancels.map(statusList).join('; ') || 'nothing (none sent)'}${probed ? ' (another merchant probed it)' : ''}`,
      );
    }
    const shipping = possibleAfter(
      initial,
      targeting.filter((op) => op.kind === 'patch'),
      (op) => op.shipping,
    );
    if (!shipping.has(order.total_shipping_value) && order.total_shipping_value < PROBE_SHIPPING_BASE)
      out.violations.push(`${label}: shipping ${order.total_shipping_value}, expected one of ${[...shipping].join(', ')}`);
  }
};

const checkRequestStates = (
  out: InvariantResult,
  isolation: InvariantResult,
  truth: MerchantTruth,
  ops: readonly Op[],
  probes: readonly Op[],
) => {
  const byTarget = groupBy(
    ops.filter((op) => ['accept', 'decline', 'decide-again'].includes(actsAs(op))),
    (op) => op.requestUuid,
  );
  const decisionOf = (op: Op) => (op.request.path.endsWith('/accept') ? 'accepted' : 'declined');
  const active = new Set(truth.affiliates.filter((affiliate) => affiliate.status === 'active').map((affiliate) => affiliate.slug));
  for (const request of truth.requests) {
    out.checked++;
    const label = `${where(truth.merchant)} request ${request.uuid} (${request.affiliate.slug})`;
    if (request.status === 'accepted' && !active.has(request.affiliate.slug) && !request.affiliate.slug.endsWith('-accepted'))
      out.violations.push(`${label}: accepted, but ${request.affiliate.slug} is not an active affiliate`);
    if (!truth.merchant.pendingRequests.has(request.uuid)) continue; // seeded decided: never targeted
    const decisions = byTarget.get(request.uuid) ?? [];
    const possible = possibleAfter(
      'pending',
      decisions.filter((op) => actsAs(op) !== 'decide-again'),
      decisionOf,
    );
    if (!possible.has(request.status)) {
      const probed = probes.some((probe) => probe.requestUuid === request.uuid && probe.request.method === 'POST');
      (probed ? isolation : out).violations.push(
        `${label}: ${request.status}, but its decisions were told ${decisions.map((op) => `${op.kind} ${statusList(op)}`).join('; ') || 'nothing (none sent)'}${probed ? ' (another merchant probed it)' : ''}`,
      );
    }
  }
};

const checkInviteStates = (out: InvariantResult, truth: MerchantTruth, ops: readonly Op[]) => {
  const stored = groupBy(truth.invites, (invite) => invite.email);
  const invites = ops.filter((op) => actsAs(op) === 'invite');
  const byEmail = groupBy(invites, (op) => op.inviteEmail);
  const seeded = new Set(truth.merchant.seededInvites);
  for (const [email, sent] of byEmail) {
    out.checked++;
    const count = stored.get(email)?.length ?? 0;
    const answered = sent.some((op) => finalStatus(op) === 200);
    const ambiguous = sent.some(hadAmbiguousAttempt);
    if (count > 1 || (answered && count !== 1) || (!answered && !ambiguous && count !== 0))
      out.violations.push(
        `${where(truth.merchant)} invite ${email}: stored ${count} times, its invites were told ${sent.map(statusList).join('; ')}`,
      );
  }
  for (const [email, items] of stored) {
    if (seeded.has(email) || byEmail.has(email)) continue;
    out.violations.push(`${where(truth.merchant)} invite ${email} is stored ${items.length} times, but nobody invited it`);
  }
};

// ---------------------------------------------------------------------------------------------
export const INVARIANT_ORDER = ['orders-once', 'idempotency', 'lists', 'ledger', 'no-500', 'isolation', 'state'] as const;

/** Runs every check; the results in the order of the issue (plus the state check at the end). */
export const checkInvariants = (ops: readonly Op[], truths: readonly MerchantTruth[]): InvariantResult[] => {
  const context: Context = { ops, truths, opsOf: groupBy(ops, (op) => op.merchant.key) };
  const isolation = checkIsolation(context);
  const state = checkState(context, isolation);
  return [
    checkOrdersOnce(context),
    checkIdempotency(context),
    checkLists(context),
    checkLedgers(context),
    checkNo500(context),
    isolation,
    state,
  ];
};
