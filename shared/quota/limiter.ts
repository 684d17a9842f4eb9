import { type OrderNumber, policyOf, QuotaContention, type QuotaItem, takeQuota } from '#shared/db/entities/quota';
import type { TableRef } from '#shared/db/table-def';
import { logger } from '#shared/logger';
import { bucketState, heldTokens, leaseTokens, type QuotaPolicy, tokenInterval } from './gcra';
import { rateLimitHeaders } from './policy';

/** A take asks for what this container expects to spend in this time. */
const LEASE_TARGET_MS = 100;
/** The longest a request waits for another request's take in the same process. */
const LEASE_WAIT_MS = 500;
/** A take never asks for more than this share of the burst, so held tokens leave the bucket its use. */
const MAX_LEASE_SHARE_OF_BURST = 0.1;
/** How much a new request moves the exponential averages of the pace (gaps between requests) and of the bucket being in use. */
const PACE_WEIGHT = 0.2;
const MAX_MERCHANTS = 10_000;

export type QuotaDecision = {
  admitted: boolean;
  retryAfterSeconds?: number;
  headers: Record<string, string>;
  degraded?: boolean;
  /** The instant it was decided on (microseconds since the epoch). */
  at: number;
  /** The order sequence number taken in the same write, when one was asked for and the take wrote. */
  orderNumber?: OrderNumber;
};

/** What this container knows of a merchant's bucket. */
type View = {
  /** The item as last seen: what the next take starts from. */
  seen: QuotaItem;
  policy: QuotaPolicy;
  /** Tokens taken and not spent yet, and where their intervals end. */
  held: { end: number; unspent: number };
  /** How often the bucket was in use at this container's takes (an exponential average, 0 to 1): which write to try first. */
  inUse: number;
  /** This container's requests for the merchant: the last one and the average gap (microseconds). */
  pace: { last: number; gap: number };
};

/** Tokens a take asks for: what this container expects to spend in LEASE_TARGET_MS, within a share of the burst. */
const leaseSize = (gapUs: number, policy: QuotaPolicy) => {
  // Leases fit well inside the burst: the bucket runs ahead by about a lease's time while they are spent.
  const target = Math.min(LEASE_TARGET_MS * 1000, (policy.burst * tokenInterval(policy)) / 4);
  const cap = Math.max(1, Math.floor(policy.burst * MAX_LEASE_SHARE_OF_BURST));
  return Math.max(1, Math.min(cap, Math.floor(target / Math.max(1, gapUs))));
};

/** r: the bucket as last seen plus what this container holds (within it), never more than the burst. */
const headersOf = (view: View, now: number) => {
  const bucket = bucketState(view.seen.tat_us ?? 0, now, view.policy);
  const held = heldTokens(view.held.end, view.held.unspent, now, view.policy);
  return rateLimitHeaders(view.policy, Math.min(view.policy.burst, bucket.remaining + held), bucket.fullInSeconds);
};

const refusal = (view: View, now: number, retryAfterUs: number): QuotaDecision => ({
  admitted: false,
  retryAfterSeconds: Math.max(1, Math.ceil(retryAfterUs / 1_000_000)),
  headers: headersOf(view, now),
  at: now,
});

/** Runs a take, noted as the merchant's take in flight (what requests arriving meanwhile wait for) until it settles. */
const sharedTake = <T>(taking: Map<string, Promise<void>>, merchantId: string, take: () => Promise<T>): Promise<T> => {
  const taken = take();
  if (taking.has(merchantId)) return taken;
  const release = () => {
    if (taking.get(merchantId) === settled) taking.delete(merchantId);
  };
  const settled: Promise<void> = taken.then(release, release);
  taking.set(merchantId, settled);
  return taken;
};

/** A request spends a token this container holds or takes tokens in one write; a failing store degrades (docs/design-notes.md#quotas). */
export const createQuotaLimiter = (options: { db: TableRef; fallback: QuotaPolicy; now?: () => number }) => {
  const nowUs = () => Math.round((options.now?.() ?? Date.now()) * 1000);
  const views = new Map<string, View>();
  const remember = (merchantId: string, view: View) => {
    views.delete(merchantId);
    views.set(merchantId, view);
    if (views.size > MAX_MERCHANTS) views.delete(views.keys().next().value as string);
  };

  /** The take in flight per merchant: a request arriving meanwhile waits for it, then decides on what it brought. */
  const taking = new Map<string, Promise<void>>();

  /** `sequence`: a create's request, which also takes its order sequence number in the take's write, when it makes one. */
  const admit = async (merchantId: string, { sequence = false }: { sequence?: boolean } = {}): Promise<QuotaDecision> => {
    // Where one process serves requests at once (npm start), wait a little for the take in flight, not write on a stale view.
    const inFlight = taking.get(merchantId);
    if (inFlight) await Promise.race([inFlight, new Promise((resolve) => setTimeout(resolve, LEASE_WAIT_MS).unref())]);
    const now = nowUs();
    const known = views.get(merchantId);
    const gap = known ? Math.max(1, now - known.pace.last) : Number.POSITIVE_INFINITY;
    const pace = {
      last: now,
      gap: known && Number.isFinite(known.pace.gap) ? known.pace.gap + PACE_WEIGHT * (gap - known.pace.gap) : gap,
    };
    const view: View = known ? { ...known, pace } : { seen: {}, policy: options.fallback, held: { end: 0, unspent: 0 }, pace, inUse: 0 };

    // A token this container holds, still inside the bucket: no write.
    const held = heldTokens(view.held.end, view.held.unspent, now, view.policy);
    if (held >= 1) {
      view.held = { end: view.held.end, unspent: held - 1 };
      remember(merchantId, view);
      return { admitted: true, headers: headersOf(view, now), at: now };
    }

    let take: Awaited<ReturnType<typeof takeQuota>>;
    try {
      take = await sharedTake(taking, merchantId, () =>
        takeQuota(options.db, merchantId, {
          clock: () => Math.max(now, nowUs()),
          want: leaseSize(pace.gap, view.policy),
          fallback: options.fallback,
          seen: view.seen,
          inUse: view.inUse > 0.5,
          sequence,
        }),
      );
    } catch (error) {
      if (error instanceof QuotaContention) {
        // The bucket kept moving under every try: refused (never admitted on a guess), retried in a second.
        logger.warn('Quota kept moving under its take: refused', { merchant_id: merchantId });
        remember(merchantId, view);
        return refusal(view, now, 1_000_000);
      }
      return degraded(merchantId, view, now);
    }
    const next: View = {
      ...view,
      seen: take.item,
      policy: take.policy,
      inUse: view.inUse + PACE_WEIGHT * ((take.inUse ? 1 : 0) - view.inUse),
      held: 'retryAfterUs' in take ? { end: 0, unspent: 0 } : { end: take.end, unspent: take.granted - 1 },
    };
    remember(merchantId, next);
    if ('retryAfterUs' in take) return refusal(next, take.at, take.retryAfterUs);
    // Counted at the answer: a take written meanwhile by another container on a later clock is in the item.
    return {
      admitted: true,
      headers: headersOf(next, Math.max(take.at, nowUs())),
      at: take.at,
      ...(take.number !== undefined ? { orderNumber: take.number } : {}),
    };
  };

  /** Fail open, on this container's own view of the bucket (the state it last saw, moved on locally). */
  const degraded = (merchantId: string, view: View, now: number): QuotaDecision => {
    const policy = policyOf(view.seen, options.fallback);
    const lease = leaseTokens(view.seen.tat_us ?? 0, now, policy, 1);
    const next: View = {
      ...view,
      policy,
      seen: 'tat' in lease ? { ...view.seen, tat_us: lease.tat } : view.seen,
      held: { end: 0, unspent: 0 },
    };
    remember(merchantId, next);
    if (!('tat' in lease)) return { ...refusal(next, now, lease.retryAfterUs), degraded: true };
    return { admitted: true, headers: headersOf(next, now), degraded: true, at: now };
  };

  return { admit };
};
