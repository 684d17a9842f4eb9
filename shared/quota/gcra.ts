/** A token bucket of `burst` tokens refilled at `rate` per second, kept as GCRA state `tat` (docs/design-notes.md#quotas). */
export type QuotaPolicy = { rate: number; burst: number };

type Lease = { granted: number; tat: number } | { granted: 0; retryAfterUs: number };

/** Microseconds per token. */
export const tokenInterval = (policy: QuotaPolicy) => Math.ceil(1_000_000 / policy.rate);

/** The tokens a bucket whose state is `tat` (0: full) holds at `now`. */
export const availableTokens = (tat: number, now: number, policy: QuotaPolicy) => {
  const step = tokenInterval(policy);
  return Math.max(0, Math.floor((now + policy.burst * step - Math.max(tat, now)) / step));
};

/** Takes up to `want` tokens at `now` from a bucket whose state is `tat` (0: full). */
export const leaseTokens = (tat: number, now: number, policy: QuotaPolicy, want: number): Lease => {
  const step = tokenInterval(policy);
  const base = Math.max(tat, now);
  const available = availableTokens(tat, now, policy);
  if (available < 1) return { granted: 0, retryAfterUs: base + step - policy.burst * step - now };
  const granted = Math.min(want, available);
  return { granted, tat: base + granted * step };
};

/** Of `unspent` tokens of a lease that moved `tat` to `end`, how many may still be spent at `now` (a passed interval's is refilled). */
export const heldTokens = (end: number, unspent: number, now: number, policy: QuotaPolicy) =>
  Math.max(0, Math.min(unspent, Math.floor((end - now) / tokenInterval(policy))));

/** The tokens left in a bucket at `now` and the seconds until it is full again (the RateLimit header's r and t). */
export const bucketState = (tat: number, now: number, policy: QuotaPolicy) => ({
  remaining: availableTokens(tat, now, policy),
  fullInSeconds: Math.ceil(Math.max(0, tat - now) / 1_000_000),
});
