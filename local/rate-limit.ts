import { RATE_LIMIT } from '#shared/rate-limit';

/**
 * The per-merchant rate limit of the deployed WAF rule (keyed on the Authorization header), for the
 * local API Gateway emulation: at most `limit` requests per key in any 5-minute window (a sliding
 * window; WAF evaluates its 5-minute window every few seconds, so it is at least as strict locally).
 */
export const RATE_WINDOW_MS = 5 * 60 * 1000;

export type RateLimiter = {
  /** Counts one request of `key`; undefined when it may pass, else the seconds until it may retry. */
  take: (key: string, now?: number) => number | undefined;
};

/** RATE_LIMIT_PER_5_MIN overrides RATE_LIMIT.requestsPer5Minutes (tests, experiments). */
export const rateLimitFromEnv = (env: NodeJS.ProcessEnv = process.env): number => {
  const value = env.RATE_LIMIT_PER_5_MIN;
  if (value === undefined || value === '') return RATE_LIMIT.requestsPer5Minutes;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`RATE_LIMIT_PER_5_MIN must be a positive integer, got ${value}`);
  return limit;
};

export const createRateLimiter = (limit: number, windowMs = RATE_WINDOW_MS): RateLimiter => {
  const seen = new Map<string, number[]>();
  let lastSweep = 0;
  const sweep = (now: number) => {
    if (now - lastSweep < windowMs) return;
    lastSweep = now;
    for (const [key, times] of seen) if ((times[times.length - 1] ?? 0) <= now - windowMs) seen.delete(key);
  };
  return {
    take: (key, now = Date.now()) => {
      sweep(now);
      const times = (seen.get(key) ?? []).filter((time) => time > now - windowMs);
      seen.set(key, times);
      if (times.length >= limit) return Math.max(1, Math.ceil(((times[0] as number) + windowMs - now) / 1000));
      times.push(now);
      return undefined;
    },
  };
};
