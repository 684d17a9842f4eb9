import { createHash } from 'node:crypto';
import { RATE_LIMIT } from '#shared/rate-limit';

/** The deployed WAF rule's limit per Authorization header, as a sliding 5-minute window (at least as strict as WAF's). */
export const RATE_WINDOW_MS = 5 * 60 * 1000;

export type RateLimiter = {
  /** Counts one request of `key`; undefined when it may pass, else the seconds until it may retry. */
  take: (key: string, now?: number) => number | undefined;
  /** How many keys it remembers now. */
  size: () => number;
};

/** RATE_LIMIT_PER_5_MIN overrides RATE_LIMIT.requestsPer5Minutes (tests, experiments). */
export const rateLimitFromEnv = (env: NodeJS.ProcessEnv = process.env): number => {
  const value = env.RATE_LIMIT_PER_5_MIN;
  if (value === undefined || value === '') return RATE_LIMIT.requestsPer5Minutes;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`RATE_LIMIT_PER_5_MIN must be a positive integer, got ${value}`);
  return limit;
};

/** The most keys (digests) remembered, least recently used out first: made-up tokens cannot grow the process. */
export const MAX_KEYS = 10_000;

const digest = (key: string) => createHash('sha256').update(key).digest('base64url').slice(0, 32);

export const createRateLimiter = (limit: number, windowMs = RATE_WINDOW_MS, maxKeys = MAX_KEYS): RateLimiter => {
  const seen = new Map<string, number[]>();
  let lastSweep = 0;
  const sweep = (now: number) => {
    if (now - lastSweep < windowMs) return;
    lastSweep = now;
    for (const [key, times] of seen) if ((times[times.length - 1] ?? 0) <= now - windowMs) seen.delete(key);
  };
  return {
    take: (rawKey, now = Date.now()) => {
      sweep(now);
      const key = digest(rawKey);
      const times = (seen.get(key) ?? []).filter((time) => time > now - windowMs);
      // Re-inserted, so the Map's order is least recently used first.
      seen.delete(key);
      seen.set(key, times);
      if (seen.size > maxKeys) seen.delete(seen.keys().next().value as string);
      if (times.length >= limit) return Math.max(1, Math.ceil(((times[0] as number) + windowMs - now) / 1000));
      times.push(now);
      return undefined;
    },
    size: () => seen.size,
  };
};
