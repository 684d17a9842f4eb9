import { describe, expect, it } from 'vitest';
import { createRateLimiter, RATE_WINDOW_MS, rateLimitFromEnv } from '#local/rate-limit';
import { RATE_LIMIT } from '#shared/rate-limit';

/** The local stand-in for the WAF per-merchant rule: N requests per Authorization value per 5 minutes. */
describe('local rate limiter', () => {
  it('lets a key through up to the limit, then answers with the seconds until its oldest request leaves the window', () => {
    const limiter = createRateLimiter(3);
    const start = 1_000_000;

    const passed = [limiter.take('Bearer a', start), limiter.take('Bearer a', start + 1000), limiter.take('Bearer a', start + 2000)];
    const refused = limiter.take('Bearer a', start + 60_000);

    expect(passed).toEqual([undefined, undefined, undefined]);
    expect(refused).toBe((RATE_WINDOW_MS - 60_000) / 1000);
  });

  it('counts each key on its own, so one merchant cannot starve another', () => {
    const limiter = createRateLimiter(1);

    limiter.take('Bearer busy', 0);
    const busyAgain = limiter.take('Bearer busy', 1);
    const other = limiter.take('Bearer quiet', 2);

    expect(busyAgain).toBeGreaterThan(0);
    expect(other).toBeUndefined();
  });

  it('lets a key through again once its requests slide out of the 5-minute window', () => {
    const limiter = createRateLimiter(1);
    limiter.take('Bearer a', 0);

    const later = limiter.take('Bearer a', RATE_WINDOW_MS + 1);

    expect(later).toBeUndefined();
  });

  it("uses the WAF rule's limit unless RATE_LIMIT_PER_5_MIN says otherwise, and refuses a bad override", () => {
    expect(rateLimitFromEnv({})).toBe(RATE_LIMIT.requestsPer5Minutes);
    expect(rateLimitFromEnv({ RATE_LIMIT_PER_5_MIN: '5' })).toBe(5);
    expect(() => rateLimitFromEnv({ RATE_LIMIT_PER_5_MIN: 'lots' })).toThrow(/positive integer/);
  });
});
