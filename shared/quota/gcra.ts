/**
 * A merchant's quota as a token bucket, kept as GCRA (generic cell rate algorithm) state: one
 * number, the theoretical arrival time `tat` (ms) at which the bucket would be full again. A
 * bucket of `burst` tokens refilled at `rate` per second: each token moves `tat` on by 1000/rate
 * ms, and tokens are there while `tat` is at most burst x 1000/rate ms ahead of now. Pure: the
 * store (shared/db/entities/quota.ts) keeps `tat`, the limiter (limiter.ts) leases from it.
 */
export type QuotaPolicy = { rate: number; burst: number };

export type Lease = { granted: number; tat: number } | { granted: 0; retryAfterMs: number };

const interval = (policy: QuotaPolicy) => 1000 / policy.rate;

/** Takes up to `want` tokens at `now` from a bucket whose state is `tat` (0: full). */
export const leaseTokens = (tat: number, now: number, policy: QuotaPolicy, want: number): Lease => {
  const step = interval(policy);
  const base = Math.max(tat, now);
  const available = Math.floor((now + policy.burst * step - base) / step + 1e-9);
  if (available < 1) return { granted: 0, retryAfterMs: Math.max(0, base + step - policy.burst * step - now) };
  const granted = Math.min(want, available);
  return { granted, tat: base + granted * step };
};

/** The tokens left in a bucket at `now` and the seconds until it is full again (the RateLimit header's r and t). */
export const bucketState = (tat: number, now: number, policy: QuotaPolicy) => {
  const step = interval(policy);
  const ahead = Math.max(0, tat - now);
  return { remaining: Math.max(0, Math.floor((policy.burst * step - ahead) / step + 1e-9)), fullInSeconds: Math.ceil(ahead / 1000) };
};
