import type { QuotaItem } from '#shared/db/entities/quota';
import { leaseQuota } from '#shared/db/entities/quota';
import type { TableRef } from '#shared/db/table-def';
import { bucketState, leaseTokens, type QuotaPolicy } from './gcra';
import { rateLimitHeaders } from './policy';

/**
 * The per-merchant quota in the request path, per container: a lease of a few tokens from the
 * merchant's shared bucket (one conditional write, shared/db/entities/quota.ts) is spent here
 * request by request, so most requests make no write; a lease lives LEASE_MS at most, so what a
 * container holds unspent is small and short-lived. When the quota store fails (throttled, timed
 * out), the request is decided on this container's own view of the bucket, the state it last saw
 * moved on locally (fail open: an outage of the quota item must not become the merchant's
 * outage, yet a flood stays bounded), and `degraded` says so.
 */
export const LEASE_MS = 1000;
/** The longest a request waits for another request's lease before leasing itself. */
export const LEASE_WAIT_MS = 500;
/** A lease is this share of the merchant's rate (at least one token). */
export const LEASE_SHARE = 0.1;
const MAX_MERCHANTS = 10_000;

export type QuotaDecision = {
  admitted: boolean;
  retryAfterSeconds?: number;
  headers: Record<string, string>;
  degraded?: boolean;
};

type Allowance = { tokens: number; expiresAt: number; seen: QuotaItem; policy: QuotaPolicy };

export const createQuotaLimiter = (options: { db: TableRef; fallback: QuotaPolicy; now?: () => number }) => {
  const allowances = new Map<string, Allowance>();
  const remember = <T>(map: Map<string, T>, key: string, value: T) => {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_MERCHANTS) map.delete(map.keys().next().value as string);
  };
  const headersOf = (allowance: Allowance, now: number) => {
    const state = bucketState(allowance.seen.tat ?? 0, now, allowance.policy);
    return rateLimitHeaders(allowance.policy, state.remaining + allowance.tokens, state.fullInSeconds);
  };

  /** The lease in flight per merchant: requests arriving meanwhile wait for it, then spend what it brought. */
  const leasing = new Map<string, Promise<unknown>>();

  const spend = (merchantId: string, now: number): QuotaDecision | undefined => {
    const held = allowances.get(merchantId);
    if (!held || held.tokens < 1 || now >= held.expiresAt) return undefined;
    held.tokens -= 1;
    return { admitted: true, headers: headersOf(held, now) };
  };

  const admit = async (merchantId: string): Promise<QuotaDecision> => {
    // One lease in flight per merchant: the others wait for it and spend what it brought, but never
    // longer than LEASE_WAIT_MS (an invocation stopped mid-lease leaves its promise unsettled forever).
    for (;;) {
      const spent = spend(merchantId, options.now?.() ?? Date.now());
      if (spent) return spent;
      const inFlight = leasing.get(merchantId);
      if (!inFlight) break;
      const settled = await Promise.race([
        inFlight.then(
          () => true,
          () => true,
        ),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), LEASE_WAIT_MS).unref()),
      ]);
      if (!settled) break;
    }
    const lease = take(merchantId);
    leasing.set(merchantId, lease);
    try {
      return await lease;
    } finally {
      if (leasing.get(merchantId) === lease) leasing.delete(merchantId);
    }
  };

  const take = async (merchantId: string): Promise<QuotaDecision> => {
    const now = options.now?.() ?? Date.now();
    const held = allowances.get(merchantId);
    const policy = held?.policy ?? options.fallback;
    let lease: Awaited<ReturnType<typeof leaseQuota>>;
    try {
      lease = await leaseQuota(
        options.db,
        merchantId,
        now,
        (quota) => Math.max(1, Math.ceil(quota.rate * LEASE_SHARE)),
        options.fallback,
        held?.seen,
      );
    } catch {
      // Fail open, on this container's own view of the bucket (the state it last saw, moved on locally).
      const seen = held?.seen ?? {};
      const state = leaseTokens(seen.tat ?? 0, now, policy, 1);
      const tat = 'tat' in state ? state.tat : (seen.tat ?? 0);
      const view: Allowance = { tokens: 0, expiresAt: now, seen: { ...seen, tat }, policy };
      remember(allowances, merchantId, view);
      return {
        admitted: 'tat' in state,
        ...('tat' in state ? {} : { retryAfterSeconds: Math.max(1, Math.ceil(state.retryAfterMs / 1000)) }),
        headers: headersOf(view, now),
        degraded: true,
      };
    }
    const allowance: Allowance = {
      tokens: Math.max(0, lease.granted - 1),
      expiresAt: now + LEASE_MS,
      seen: lease.item,
      policy: lease.policy,
    };
    remember(allowances, merchantId, allowance);
    if (!('retryAfterMs' in lease)) return { admitted: true, headers: headersOf(allowance, now) };
    return {
      admitted: false,
      retryAfterSeconds: Math.max(1, Math.ceil(lease.retryAfterMs / 1000)),
      headers: headersOf(allowance, now),
    };
  };
  return { admit };
};
