import type { Stage } from '#shared/config';
import type { QuotaPolicy } from './gcra';

/** Each merchant's default quota per stage, for reads and writes together (docs/design-notes.md#quotas). */
export const DEFAULT_QUOTAS: Record<Stage, QuotaPolicy> = {
  live: { rate: 50, burst: 100 },
  sandbox: { rate: 10, burst: 20 },
};

/** The largest rate or burst ops may set (a typo such as 50000 is refused, not obeyed). */
const MAX_QUOTA = 10_000;

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

/** The IETF draft's RateLimit headers, over the shortest whole window that holds the burst, so `r` is never more than `q`. */
export const rateLimitHeaders = (policy: QuotaPolicy, remaining: number, fullInSeconds: number): Record<string, string> => {
  const window = Math.max(1, Math.ceil(policy.burst / policy.rate));
  const quota = Math.round(policy.rate * window);
  return {
    'ratelimit-policy': `"default";q=${quota};w=${window}`,
    ratelimit: `"default";r=${Math.min(quota, Math.max(0, Math.floor(remaining)))};t=${fullInSeconds}`,
  };
};

/** The environment of a local stack whose merchants are not metered: tools that measure something else (bench, soak, tests). */
export const UNMETERED_QUOTA_ENV = { QUOTA_RATE_PER_SECOND: '100000', QUOTA_BURST: '100000' } as const;
