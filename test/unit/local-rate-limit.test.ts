import { describe, expect, it } from 'vitest';
import { createRateLimiter, MAX_KEYS, RATE_WINDOW_MS, rateLimitFromEnv } from '#local/rate-limit';
import { RATE_LIMIT, rateLimitKey } from '#shared/rate-limit';

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

  it('gives every spelling authentication accepts one budget: the scheme in any case, any run of whitespace', () => {
    // Prepare
    const limiter = createRateLimiter(1);
    const spellings = ['Bearer live_Token', 'bearer live_Token', 'BEARER  live_Token', 'Bearer\tlive_Token '];

    // Act
    const answers = spellings.map((header, index) => limiter.take(rateLimitKey(header), index));

    // Assess
    expect(answers[0]).toBeUndefined();
    expect(answers.slice(1).every((answer) => answer !== undefined)).toBe(true);
    expect(new Set(spellings.map(rateLimitKey))).toEqual(new Set(['bearer live_token']));
  });

  it('remembers at most MAX_KEYS keys, whatever their length, so a flood of made-up tokens cannot grow the process', () => {
    // Prepare
    const limiter = createRateLimiter(5, RATE_WINDOW_MS, 100);

    // Act
    for (let index = 0; index < 1000; index++) limiter.take(`Bearer ${'x'.repeat(7000)}${index}`, index);
    const refusedStill = (() => {
      const busy = createRateLimiter(1, RATE_WINDOW_MS, 100);
      busy.take('Bearer busy', 0);
      return busy.take('Bearer busy', 1);
    })();

    // Assess
    expect(limiter.size()).toBe(100);
    expect(MAX_KEYS).toBeGreaterThanOrEqual(10_000);
    expect(refusedStill).toBeGreaterThan(0);
  });
});
