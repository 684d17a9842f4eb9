import type { Stage } from '#shared/config';
import type { QuotaPolicy } from './gcra';

/**
 * Each merchant's default quota per stage: requests per second sustained, and the burst it may
 * spend at once (one budget for reads and writes: a shop's platform mixes them, and what a
 * merchant can cost the table is per merchant either way). Ops give a merchant its own with
 * `npm run admin -- quota`. QUOTA_RATE_PER_SECOND and QUOTA_BURST replace the defaults (tests, the
 * bench); docs/design-notes.md says how the stage is sized against them.
 */
export const DEFAULT_QUOTAS: Record<Stage, QuotaPolicy> = {
  live: { rate: 50, burst: 100 },
  sandbox: { rate: 10, burst: 20 },
};

/** The largest rate or burst ops may set (a typo such as 50000 is refused, not obeyed). */
export const MAX_QUOTA = 10_000;

/** A rate or burst as given: a whole number from 1 to MAX_QUOTA, else the reason it is refused. */
export const quotaValueRefusal = (name: string, value: unknown): string | undefined => {
  const number = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  return Number.isInteger(number) && number >= 1 && number <= MAX_QUOTA
    ? undefined
    : `--${name} must be a whole number from 1 to ${MAX_QUOTA}`;
};

export const defaultQuota = (stage: Stage, env: NodeJS.ProcessEnv = process.env): QuotaPolicy => {
  const rate = Number(env.QUOTA_RATE_PER_SECOND || DEFAULT_QUOTAS[stage].rate);
  const burst = Number(env.QUOTA_BURST || DEFAULT_QUOTAS[stage].burst);
  if (!(rate > 0) || !(burst >= 1)) throw new Error('QUOTA_RATE_PER_SECOND and QUOTA_BURST must be positive numbers');
  return { rate, burst };
};

/**
 * The IETF draft's headers (draft-ietf-httpapi-ratelimit-headers): the policy, and what is left of
 * it. The policy states the rate itself, `q` requests per `w` seconds with q/w the rate, over the
 * shortest whole window whose quota holds the burst (w = ceil(burst / rate)), so `r`, never more
 * than the burst, is never more than `q` either. Rates are whole numbers (quotaValueRefusal).
 */
export const policyWindow = (policy: QuotaPolicy) => {
  const window = Math.max(1, Math.ceil(policy.burst / policy.rate));
  return { quota: Math.round(policy.rate * window), window };
};

export const rateLimitHeaders = (policy: QuotaPolicy, remaining: number, fullInSeconds: number): Record<string, string> => {
  const { quota, window } = policyWindow(policy);
  return {
    'ratelimit-policy': `"default";q=${quota};w=${window}`,
    ratelimit: `"default";r=${Math.min(quota, Math.max(0, Math.floor(remaining)))};t=${fullInSeconds}`,
  };
};

/** The environment of a local stack whose merchants are not metered: tools that measure something else (bench, soak, tests). */
export const UNMETERED_QUOTA_ENV = { QUOTA_RATE_PER_SECOND: '100000', QUOTA_BURST: '100000' } as const;
