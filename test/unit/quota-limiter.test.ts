import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { functionTable } from '#shared/db/client';
import { MAX_TAKE_ATTEMPTS } from '#shared/db/entities/quota';
import { tokenInterval } from '#shared/quota/gcra';
import { createQuotaLimiter, type QuotaDecision } from '#shared/quota/limiter';
import { conditionFailed, ddbMock, provisionedThroughputExceeded, resetAwsMocks } from './support/aws';

/** The per-container limiter against a mocked quota item. */
const NOW = 1_000_000;

/**
 * The quota item as DynamoDB keeps it, for the two writes the limiter makes: `SET tat_us = :end`
 * on a full bucket, `SET tat_us = tat_us + :add` on one in use, each on its condition, a failed one
 * answering the item as it stands. `meddle` runs before each write (another container's write).
 */
const quotaItem = (meddle?: (item: { tat_us?: number }, call: number) => void) => {
  const item: { tat_us?: number } = {};
  let calls = 0;
  ddbMock.on(UpdateCommand).callsFake(async (input: UpdateCommandInput) => {
    meddle?.(item, calls++);
    const values = input.ExpressionAttributeValues ?? {};
    const tat = item.tat_us;
    const adds = input.UpdateExpression?.includes('+') ?? false;
    const holds = adds ? tat !== undefined && tat >= values[':now'] && tat <= values[':last'] : tat === undefined || tat < values[':now'];
    if (!holds) throw conditionFailed(tat === undefined ? undefined : marshall(item));
    item.tat_us = adds ? (tat ?? 0) + values[':add'] : values[':end'];
    return { Attributes: { ...item } };
  });
  return item;
};

const remainingOf = (decision: QuotaDecision | undefined) => Number(decision?.headers.ratelimit?.match(/r=(\d+)/)?.[1]);
const quotaOf = (decision: QuotaDecision | undefined) => Number(decision?.headers['ratelimit-policy']?.match(/q=(\d+)/)?.[1]);

beforeEach(() => {
  resetAwsMocks();
});

describe('quota limiter', () => {
  it('takes one token per request in one conditional write when the container sees few requests', async () => {
    // Prepare
    const item = quotaItem();
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 100, burst: 200 }, now: () => NOW });

    // Act
    const decisions = [];
    for (let index = 0; index < 3; index++) decisions.push(await limiter.admit('m1'));

    // Assess: the second and third come at the same instant, a fast pace, yet a lease is only a tenth of the burst
    expect(decisions.every((decision) => decision.admitted)).toBe(true);
    expect(decisions[0]?.headers['ratelimit-policy']).toBe('"default";q=200;w=2');
    expect(decisions.map(remainingOf)).toEqual([199, 198, 197]);
    expect(item.tat_us).toBeLessThanOrEqual(NOW * 1000 + 21 * tokenInterval({ rate: 100, burst: 200 }));
  });

  it('refuses once the bucket is spent, with the seconds until the next token', async () => {
    // Prepare
    quotaItem();
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 1, burst: 2 }, now: () => NOW });

    // Act
    const decisions = [await limiter.admit('m2'), await limiter.admit('m2'), await limiter.admit('m2')];

    // Assess
    expect(decisions.map((decision) => decision.admitted)).toEqual([true, true, false]);
    expect(decisions[2]?.retryAfterSeconds).toBe(1);
    expect(decisions[2]?.headers.ratelimit).toBe('"default";r=0;t=2');
  });

  it('states the rate in RateLimit-Policy (q/w) and never more than q left, when the rate is above the burst', async () => {
    // Prepare
    quotaItem();
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 200, burst: 100 }, now: () => NOW });

    // Act
    const decisions = [];
    for (let index = 0; index < 120; index++) decisions.push(await limiter.admit('m3'));

    // Assess
    expect(decisions[0]?.headers['ratelimit-policy']).toBe('"default";q=200;w=1');
    expect(decisions.filter((decision) => decision.admitted)).toHaveLength(100);
    expect(decisions.every((decision) => remainingOf(decision) <= quotaOf(decision))).toBe(true);
  });

  it('admits on its own view of the bucket when the quota store is throttled (fail open), still bounded, and says so', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(provisionedThroughputExceeded());
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 1, burst: 2 }, now: () => NOW });

    // Act
    const decisions = [await limiter.admit('m4'), await limiter.admit('m4'), await limiter.admit('m4')];

    // Assess
    // The third is refused from the view the first two left, without asking the store at all.
    expect(decisions.map((decision) => [decision.admitted, decision.degraded ?? false])).toEqual([
      [true, true],
      [true, true],
      [false, false],
    ]);
  });

  it('does not hold up the next request of the merchant behind a write that never settles', async () => {
    // Prepare: the first write hangs forever (an invocation stopped mid-write), the next ones answer
    const item = quotaItem();
    let calls = 0;
    ddbMock.on(UpdateCommand).callsFake(async (input: UpdateCommandInput) => {
      calls += 1;
      if (calls === 1) return new Promise(() => undefined);
      item.tat_us = input.ExpressionAttributeValues?.[':end'];
      return { Attributes: { ...item } };
    });
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 100, burst: 200 }, now: () => NOW });

    // Act
    void limiter.admit('m5');
    const next = await limiter.admit('m5');

    // Assess
    expect(next.admitted).toBe(true);
    expect(calls).toBe(2);
  });
});

describe('quota limiter under contention', () => {
  const policy = { rate: 10, burst: 20 };
  const step = tokenInterval(policy);

  it('decides a lost write again on the bucket as it stands: another container took tokens, so it adds its own after them', async () => {
    // Prepare: another container has taken five tokens since this one last looked (it saw a full bucket)
    const item = quotaItem((stored, call) => {
      if (call === 0) stored.tat_us = NOW * 1000 + 5 * step;
    });
    const limiter = createQuotaLimiter({ db: functionTable, fallback: policy, now: () => NOW });

    // Act
    const decision = await limiter.admit('c1');

    // Assess: a full-bucket write lost, then one that adds a token after the other container's five
    expect(decision).toMatchObject({ admitted: true });
    expect(decision.degraded).toBeUndefined();
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 2);
    expect(ddbMock.commandCalls(UpdateCommand)[1]?.args[0].input.UpdateExpression).toBe('SET #tat = #tat + :add REMOVE #taken');
    expect(item.tat_us).toBe(NOW * 1000 + 6 * step);
    expect(remainingOf(decision)).toBe(14);
  });

  it('refuses, and writes nothing more, when the lost write shows the bucket spent by others (no fail open)', async () => {
    // Prepare: other containers spent the whole burst since this one last looked
    quotaItem((stored, call) => {
      if (call === 0) stored.tat_us = NOW * 1000 + policy.burst * step;
    });
    const limiter = createQuotaLimiter({ db: functionTable, fallback: policy, now: () => NOW });

    // Act
    const decision = await limiter.admit('c2');

    // Assess
    expect(decision).toMatchObject({ admitted: false, retryAfterSeconds: 1 });
    expect(decision.degraded).toBeUndefined();
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(decision.headers.ratelimit).toBe('"default";r=0;t=2');
  });

  it('refuses, never admits, when the bucket moves under every try', async () => {
    // Prepare: every write is lost to another container that takes one more token each time
    let taken = 0;
    ddbMock.on(UpdateCommand).callsFake(async () => {
      taken += 1;
      throw conditionFailed(marshall({ tat_us: NOW * 1000 + taken * step }));
    });
    const limiter = createQuotaLimiter({ db: functionTable, fallback: policy, now: () => NOW });

    // Act
    const decision = await limiter.admit('c3');

    // Assess
    expect(decision).toMatchObject({ admitted: false, retryAfterSeconds: 1 });
    expect(decision.degraded).toBeUndefined();
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, MAX_TAKE_ATTEMPTS);
  });

  it('keeps 20 containers sharing one bucket exact: none refused at 70 %, never more than rate x time + burst in a flood', async () => {
    // Prepare: 20 containers, each serving one request at a time, on one item; a request goes to any of them
    quotaItem();
    const shared = { rate: 50, burst: 100 };
    let clock = NOW;
    const containers = Array.from({ length: 20 }, () => createQuotaLimiter({ db: functionTable, fallback: shared, now: () => clock }));
    let seed = 7;
    const pick = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return containers[seed % containers.length] ?? containers[0];
    };
    const offer = async (perSecond: number, seconds: number) => {
      const decisions: QuotaDecision[] = [];
      for (let index = 0; index < perSecond * seconds; index++) {
        clock += 1000 / perSecond;
        const container = pick();
        if (container) decisions.push(await container.admit('busy'));
      }
      return decisions;
    };

    // Act
    const steady = await offer(0.7 * shared.rate, 60);
    const flood = await offer(5 * shared.rate, 10);

    // Assess
    expect(steady.filter((decision) => !decision.admitted)).toHaveLength(0);
    expect(flood.filter((decision) => decision.admitted).length).toBeLessThanOrEqual(shared.rate * 10 + shared.burst);
    expect(flood.filter((decision) => decision.admitted).length).toBeGreaterThanOrEqual(shared.rate * 10);
    expect([...steady, ...flood].every((decision) => remainingOf(decision) <= quotaOf(decision))).toBe(true);
  });

  it('lets a busy container take several tokens per write, still within the bucket', async () => {
    // Prepare: one container at 500 requests/s on a quota of 1,000/s
    quotaItem();
    const fast = { rate: 1000, burst: 2000 };
    let clock = NOW;
    const limiter = createQuotaLimiter({ db: functionTable, fallback: fast, now: () => clock });

    // Act: 10 s at 500/s, then 2 s at 5,000/s
    let steadyAdmitted = 0;
    for (let index = 0; index < 5000; index++) {
      clock += 2;
      if ((await limiter.admit('fast')).admitted) steadyAdmitted += 1;
    }
    const writesAtHalf = ddbMock.commandCalls(UpdateCommand).length;
    let floodAdmitted = 0;
    for (let index = 0; index < 10_000; index++) {
      clock += 0.2;
      if ((await limiter.admit('fast')).admitted) floodAdmitted += 1;
    }

    // Assess
    expect(steadyAdmitted).toBe(5000);
    expect(writesAtHalf).toBeLessThan(5000 / 10);
    expect(floodAdmitted).toBeLessThanOrEqual(fast.rate * 2 + fast.burst);
  });
});

describe("quota limiter and a create's order sequence", () => {
  /** The quota item with the order sequence at `seq` (none: not started), checking the take's conditions. */
  const sequencedItem = (seq?: number) => {
    const item: { tat_us?: number; orders_seq?: number } = seq === undefined ? {} : { orders_seq: seq };
    ddbMock.on(UpdateCommand).callsFake(async (input: UpdateCommandInput) => {
      const values = input.ExpressionAttributeValues ?? {};
      const takesSeq = input.UpdateExpression?.includes('ADD #seq') ?? false;
      const bucketHolds = item.tat_us === undefined || item.tat_us < values[':now'];
      if (!bucketHolds || (takesSeq && item.orders_seq === undefined)) throw conditionFailed(marshall(item));
      item.tat_us = values[':end'];
      if (takesSeq) item.orders_seq = (item.orders_seq ?? 0) + values[':one'];
      return { Attributes: { ...item } };
    });
    return item;
  };

  it('takes the sequence number in the same conditional write as the tokens, marking the write for the change feed', async () => {
    // Prepare
    const item = sequencedItem(41);
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 100, burst: 200 }, now: () => NOW });

    // Act
    const decision = await limiter.admit('m1', { sequence: true });

    // Assess
    expect(decision).toMatchObject({ admitted: true, orderNumber: { seq: 42 } });
    expect(item.orders_seq).toBe(42);
    expect(ddbMock).toHaveReceivedCommandTimes(UpdateCommand, 1);
    const input = ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(input?.UpdateExpression).toBe('SET #tat = :end, #taken = :taken ADD #seq :one');
    expect(input?.ConditionExpression).toMatch(/ AND attribute_exists\(#seq\)$/);
  });

  it('takes only tokens, and no sequence number, while the item has no sequence yet (the create then starts it)', async () => {
    // Prepare
    const item = sequencedItem();
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 100, burst: 200 }, now: () => NOW });

    // Act
    const decision = await limiter.admit('m1', { sequence: true });

    // Assess: the first write (with the sequence) is refused, the second takes the tokens alone
    expect(decision.admitted).toBe(true);
    expect(decision.orderNumber).toBeUndefined();
    expect(item).toEqual({ tat_us: expect.any(Number) });
    expect(ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input.UpdateExpression)).toEqual([
      'SET #tat = :end, #taken = :taken ADD #seq :one',
      'SET #tat = :end REMOVE #taken',
    ]);
  });

  it("takes no sequence number for another route's request, and removes the change feed's mark", async () => {
    // Prepare
    const item = sequencedItem(41);
    const limiter = createQuotaLimiter({ db: functionTable, fallback: { rate: 100, burst: 200 }, now: () => NOW });

    // Act
    const decision = await limiter.admit('m1');

    // Assess
    expect(decision.orderNumber).toBeUndefined();
    expect(item.orders_seq).toBe(41);
    expect(ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression).toBe('SET #tat = :end REMOVE #taken');
  });
});
