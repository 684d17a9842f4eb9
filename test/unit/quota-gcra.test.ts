import { describe, expect, it } from 'vitest';
import { bucketState, leaseTokens } from '#shared/quota/gcra';

/** The token bucket as GCRA state: one number, the time the bucket would be full again. */
describe('quota bucket (GCRA)', () => {
  const policy = { rate: 10, burst: 20 };

  it('grants a full burst from a full bucket, then nothing until a token has refilled, and says when', () => {
    // Act
    const first = leaseTokens(0, 1_000_000, policy, 20);
    const next = first.granted > 0 && 'tat' in first ? leaseTokens(first.tat, 1_000_000, policy, 1) : undefined;

    // Assess
    expect(first).toEqual({ granted: 20, tat: 1_000_000 + 2000 });
    expect(next).toEqual({ granted: 0, retryAfterMs: 100 });
  });

  it('refills at the rate: after 1 s, 10 tokens again, never more than the burst', () => {
    // Prepare
    const drained = 1_000_000 + 2000;

    // Act
    const afterOne = leaseTokens(drained, 1_001_000, policy, 50);
    const afterLong = leaseTokens(drained, 2_000_000, policy, 50);

    // Assess
    expect(afterOne.granted).toBe(10);
    expect(afterLong.granted).toBe(20);
  });

  it('admits exactly rate x seconds + burst over a long run of single requests', () => {
    // Prepare: 100 requests per second offered for 10 s against 10/s with a burst of 20
    let tat = 0;
    let admitted = 0;

    // Act
    for (let ms = 0; ms <= 10_000; ms += 10) {
      const lease = leaseTokens(tat, ms, policy, 1);
      if ('tat' in lease) {
        tat = lease.tat;
        admitted += lease.granted;
      }
    }

    // Assess
    expect(admitted).toBe(10 * 10 + 20);
  });

  it('reports the tokens left and the seconds until the bucket is full (RateLimit r and t)', () => {
    expect(bucketState(0, 5000, policy)).toEqual({ remaining: 20, fullInSeconds: 0 });
    expect(bucketState(5000 + 500, 5000, policy)).toEqual({ remaining: 15, fullInSeconds: 1 });
    expect(bucketState(5000 + 2000, 5000, policy)).toEqual({ remaining: 0, fullInSeconds: 2 });
  });
});
