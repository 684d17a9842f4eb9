import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { functionTable } from '#shared/db/client';
import { createQuotaLimiter } from '#shared/quota/limiter';
import { ddbMock, provisionedThroughputExceeded, resetAwsMocks } from './support/aws';

/** The per-container allowance against a mocked quota item. */
const NOW = 1_000_000;

beforeEach(() => {
  resetAwsMocks();
  ddbMock.on(UpdateCommand).callsFake(async (input) => ({ Attributes: { tat: input.ExpressionAttributeValues[':tat'] } }));
});

describe('quota limiter', () => {
  it('leases a tenth of the rate in one write and spends it locally: ten requests, one write', async () => {
    // Prepare
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 100, burst: 200 }, now: () => NOW });

    // Act
    const decisions = [];
    for (let index = 0; index < 10; index++) decisions.push(await limiter.admit('m1'));

    // Assess
    expect(decisions.every((decision) => decision.admitted)).toBe(true);
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(decisions[0]?.headers['ratelimit-policy']).toBe('"default";q=200;w=2');
  });

  it('refuses once the bucket is spent, with the seconds until the next token', async () => {
    // Prepare
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 1, burst: 2 }, now: () => NOW });

    // Act
    const decisions = [await limiter.admit('m2'), await limiter.admit('m2'), await limiter.admit('m2')];

    // Assess
    expect(decisions.map((decision) => decision.admitted)).toEqual([true, true, false]);
    expect(decisions[2]?.retryAfterSeconds).toBe(1);
    expect(decisions[2]?.headers.ratelimit).toBe('"default";r=0;t=2');
  });

  it('admits on its own view of the bucket when the quota store is throttled (fail open), still bounded, and says so', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(provisionedThroughputExceeded());
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 1, burst: 2 }, now: () => NOW });

    // Act
    const decisions = [await limiter.admit('m3'), await limiter.admit('m3'), await limiter.admit('m3')];

    // Assess
    // The third is refused from the view the first two left, without asking the store at all.
    expect(decisions.map((decision) => [decision.admitted, decision.degraded ?? false])).toEqual([
      [true, true],
      [true, true],
      [false, false],
    ]);
  });
});

describe('quota limiter, a lease that never settles', () => {
  it('does not hold the next request of the merchant longer than LEASE_WAIT_MS (an invocation stopped mid-lease)', async () => {
    // Prepare: the first lease hangs forever, the next ones answer
    let calls = 0;
    ddbMock.on(UpdateCommand).callsFake(async (input) => {
      calls += 1;
      if (calls === 1) return new Promise(() => undefined);
      return { Attributes: { tat: input.ExpressionAttributeValues[':tat'] } };
    });
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 100, burst: 200 }, now: () => NOW });

    // Act
    void limiter.admit('m4');
    const next = await limiter.admit('m4');

    // Assess
    expect(next.admitted).toBe(true);
    expect(calls).toBe(2);
  });
});
