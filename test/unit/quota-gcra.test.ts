import { describe, expect, it } from 'vitest';
import { bucketState, heldTokens, leaseTokens, tokenInterval } from '#shared/quota/gcra';

/** The token bucket as GCRA state: one number (microseconds), the time the bucket would be full again. */
describe('quota bucket (GCRA)', () => {
  const policy = { rate: 10, burst: 20 };
  const S = 1_000_000;

  it('grants a full burst from a full bucket, then nothing until a token has refilled, and says when', () => {
    // Act
    const first = leaseTokens(0, 1000 * S, policy, 20);
    const next = first.granted > 0 && 'tat' in first ? leaseTokens(first.tat, 1000 * S, policy, 1) : undefined;

    // Assess
    expect(first).toEqual({ granted: 20, tat: 1002 * S });
    expect(next).toEqual({ granted: 0, retryAfterUs: 100_000 });
  });

  it('refills at the rate: after 1 s, 10 tokens again, never more than the burst', () => {
    // Prepare
    const drained = 1002 * S;

    // Act
    const afterOne = leaseTokens(drained, 1001 * S, policy, 50);
    const afterLong = leaseTokens(drained, 2000 * S, policy, 50);

    // Assess
    expect(afterOne.granted).toBe(10);
    expect(afterLong.granted).toBe(20);
  });

  it('admits exactly rate x seconds + burst over a long run of single requests', () => {
    // Prepare: 100 requests per second offered for 10 s against 10/s with a burst of 20
    let tat = 0;
    let admitted = 0;

    // Act
    for (let us = 0; us <= 10 * S; us += 10_000) {
      const lease = leaseTokens(tat, us, policy, 1);
      if ('tat' in lease) {
        tat = lease.tat;
        admitted += lease.granted;
      }
    }

    // Assess
    expect(admitted).toBe(10 * 10 + 20);
  });

  it('rounds the interval up to a whole microsecond, so the bucket never refills faster than its rate', () => {
    expect(tokenInterval({ rate: 3, burst: 1 })).toBe(333_334);
    expect(tokenInterval({ rate: 10_000, burst: 1 })).toBe(100);
  });

  it('lets a container spend held tokens only while their intervals have not passed', () => {
    // Prepare: five tokens taken at 1000 s from a full bucket: their intervals end at 1000.5 s
    const end = 1000 * S + 500_000;

    // Act
    const atOnce = heldTokens(end, 4, 1000 * S, policy);
    const later = heldTokens(end, 4, 1000 * S + 250_000, policy);
    const past = heldTokens(end, 4, 1001 * S, policy);

    // Assess
    expect([atOnce, later, past]).toEqual([4, 2, 0]);
  });

  it('reports the tokens left and the seconds until the bucket is full (RateLimit r and t)', () => {
    expect(bucketState(0, 5 * S, policy)).toEqual({ remaining: 20, fullInSeconds: 0 });
    expect(bucketState(5 * S + 500_000, 5 * S, policy)).toEqual({ remaining: 15, fullInSeconds: 1 });
    expect(bucketState(7 * S, 5 * S, policy)).toEqual({ remaining: 0, fullInSeconds: 2 });
  });
});
