import { describe, expect, it } from 'vitest';
import { endpointRestAfterFailures, STANDARD_SCHEDULE_SECONDS, waitBeforeNextAttempt } from '#shared/webhooks/schedule';

/** The values a wait takes over a spread of random draws. */
const spread = (wait: (random: () => number) => number | undefined) =>
  new Set(Array.from({ length: 11 }, (_, index) => wait(() => index / 10)));

describe('the jitter of webhook retries and endpoint rests', () => {
  it('spreads a short wait over ±10% to the millisecond, so that retries that failed together do not come back together', () => {
    // Act
    const waits = spread((random) => waitBeforeNextAttempt(1, undefined, STANDARD_SCHEDULE_SECONDS, random));

    // Assess: 5 s becomes 4.5 s to 5.5 s in 11 steps, not 5 or 6 whole seconds.
    expect(waits.size).toBe(11);
    expect(Math.min(...(waits as Set<number>))).toBe(4.5);
    expect(Math.max(...(waits as Set<number>))).toBe(5.5);
  });

  it('spreads an endpoint rest of 1 or 2 s too, which whole seconds kept exact (and in step with an endpoint down every other second)', () => {
    // Act
    const one = spread((random) => endpointRestAfterFailures(1, undefined, [0, 1, 2], random));
    const two = spread((random) => endpointRestAfterFailures(2, undefined, [0, 1, 2], random));

    // Assess
    expect([...one]).toContain(0.9);
    expect([...one]).toContain(1.1);
    expect(two.size).toBe(11);
  });

  it('waits what Retry-After asks when it asks for longer than the jittered wait', () => {
    // Act
    const wait = waitBeforeNextAttempt(1, 30, STANDARD_SCHEDULE_SECONDS, () => 1);

    // Assess
    expect(wait).toBe(30);
  });

  it('has no wait after the schedule is exhausted: the delivery is given up', () => {
    // Act
    const wait = waitBeforeNextAttempt(STANDARD_SCHEDULE_SECONDS.length, undefined, STANDARD_SCHEDULE_SECONDS, () => 0.5);

    // Assess
    expect(wait).toBeUndefined();
  });
});
