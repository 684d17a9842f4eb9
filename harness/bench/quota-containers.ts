/** The quota limiter's exactness as simulated containers against DynamoDB Local (docs/contributing.md#how-each-part-measures). */
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { localClientConfig } from '#local/aws-env';
import { startDynamoDbLocal } from '#local/emulators';
import { freePort } from '#local/ports';
import { ensureTable } from '#local/resources';
import type { QuotaPolicy } from '#shared/quota/gcra';
import { createQuotaLimiter, type QuotaDecision } from '#shared/quota/limiter';
import { FUNCTION_CLIENT_CONFIG } from '#shared/sdk-timeouts';
import { type Print, printTable } from './local';
import { p50p99 } from './percentile';

const CONTAINERS_BENCH = {
  containers: 20,
  load: 0.7,
  seconds: 30,
  floodFactor: 2,
  floodSeconds: 10,
  policies: [
    { rate: 50, burst: 100 },
    { rate: 200, burst: 100 },
    { rate: 1000, burst: 2000 },
  ] as QuotaPolicy[],
};
/** What a request does besides its take, holding its container. */
const HANDLER_MS = 5;

/** A DynamoDB client on the emulator configured as the functions' own. */
const functionClient = (endpoint: string) => new DynamoDBClient({ endpoint, ...localClientConfig, ...FUNCTION_CLIENT_CONFIG.dynamodb });

type Outcome = { decision: QuotaDecision; ms: number; flood: boolean };

/** The most any window admitted over rate x window + burst (<= 0: never more than the bucket allows). */
const worstWindowExcess = (atUs: number[], policy: QuotaPolicy) => {
  const sorted = [...atUs].sort((a, b) => a - b);
  let lowest = Number.POSITIVE_INFINITY;
  let worst = Number.NEGATIVE_INFINITY;
  sorted.forEach((at, index) => {
    const level = index - (policy.rate * at) / 1_000_000;
    lowest = Math.min(lowest, level);
    worst = Math.max(worst, level - lowest + 1 - policy.burst);
  });
  return worst;
};

/** The containers serving the policy's steady load, then its flood: each request's decision, and the quota's writes in the steady part. */
const simulate = async (endpoint: string, table: string, policy: QuotaPolicy, merchantId: string) => {
  const { containers: count, load, seconds, floodFactor, floodSeconds } = CONTAINERS_BENCH;
  let writes = 0;
  const containers = Array.from({ length: count }, () => {
    const client = functionClient(endpoint);
    client.middlewareStack.add(
      (next) => async (args) => {
        writes += 1;
        return next(args);
      },
      { step: 'initialize', name: 'countWrites' },
    );
    const ddb = DynamoDBDocumentClient.from(client);
    const clock = { now: (): number => Date.now(), last: 0 };
    return { limiter: createQuotaLimiter({ db: { ddb, table }, fallback: policy, now: () => clock.now() }), busy: false, client, clock };
  });
  const queue: { flood: boolean; at: number }[] = [];
  const outcomes: Outcome[] = [];
  const inFlight = new Set<Promise<void>>();
  const serve = (container: (typeof containers)[number], flood: boolean, at: number) => {
    container.busy = true;
    // The request's clock starts at its scheduled arrival, and a container's clock never runs back.
    const offset = performance.now() - Math.max(at, container.clock.last);
    container.clock.now = () => {
      container.clock.last = performance.now() - offset;
      return performance.timeOrigin + container.clock.last;
    };
    const task = (async () => {
      const started = performance.now();
      const decision = await container.limiter.admit(merchantId);
      const ms = performance.now() - started;
      outcomes.push({ decision, ms, flood });
      await sleep(HANDLER_MS);
      const next = queue.shift();
      if (next === undefined) container.busy = false;
      else serve(container, next.flood, next.at);
    })();
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  };
  const arrive = (flood: boolean, at: number) => {
    const idle = containers.filter((container) => !container.busy);
    const container = idle[Math.floor(Math.random() * idle.length)];
    if (container) serve(container, flood, at);
    else queue.push({ flood, at });
  };
  const offer = async (perSecond: number, forSeconds: number, flood: boolean) => {
    const started = performance.now();
    let due = 0;
    while (due < forSeconds * 1000) {
      due += -Math.log(1 - Math.random()) * (1000 / perSecond);
      const wait = started + due - performance.now();
      if (wait > 1) await sleep(wait);
      arrive(flood, started + due);
    }
  };
  await offer(load * policy.rate, seconds, false);
  const steadyWrites = writes;
  const steadyCount = outcomes.length;
  await offer(floodFactor * policy.rate, floodSeconds, true);
  while (inFlight.size > 0 || queue.length > 0) await Promise.all([...inFlight]);
  for (const container of containers) container.client.destroy();
  return { outcomes, steadyWrites, steadyCount };
};

const summarise = (policy: QuotaPolicy, { outcomes, steadyWrites, steadyCount }: Awaited<ReturnType<typeof simulate>>) => {
  const steady = outcomes.filter((outcome) => !outcome.flood);
  const flood = outcomes.filter((outcome) => outcome.flood);
  const floodAt = flood.map((outcome) => outcome.decision.at);
  const admittedAt = outcomes.filter((outcome) => outcome.decision.admitted).map((outcome) => outcome.decision.at);
  return {
    policy,
    steady: {
      sent: steady.length,
      refused: steady.filter((outcome) => !outcome.decision.admitted).length,
      degraded: steady.filter((outcome) => outcome.decision.degraded).length,
    },
    // Admitted in the flood against what the bucket allows from its first decision to its last.
    flood: {
      sent: flood.length,
      admitted: flood.filter((outcome) => outcome.decision.admitted).length,
      allowed: Math.floor((policy.rate * (Math.max(...floodAt) - Math.min(...floodAt))) / 1_000_000) + policy.burst,
    },
    worstWindowExcess: worstWindowExcess(admittedAt, policy),
    writesPerRequest: steadyWrites / Math.max(1, steadyCount),
    take: p50p99(steady.map((outcome) => outcome.ms)),
  };
};

/** The quota's own writes before measuring: DynamoDB Local is a JVM that compiles its hot paths over its first thousand or so requests. */
const WARM_UP_TAKES = 2000;
const warmUp = async (endpoint: string, table: string) => {
  const ddb = DynamoDBDocumentClient.from(functionClient(endpoint));
  const limiter = createQuotaLimiter({ db: { ddb, table }, fallback: { rate: 10_000, burst: 10_000 } });
  let next = 0;
  const lane = async () => {
    // A merchant per take: one write each, as a quiet container makes them.
    while (next < WARM_UP_TAKES) await limiter.admit(`warm-up-${next++}`);
  };
  await Promise.all(Array.from({ length: 10 }, lane));
  ddb.destroy();
};

export const benchQuotaContainers = async (print: Print) => {
  const { containers, load, seconds, floodFactor, floodSeconds } = CONTAINERS_BENCH;
  print(
    `\n### Exact across containers\n\nThe limiter as ${containers} containers serving one request at a time (each holds its container for its take and ${HANDLER_MS} ms), against DynamoDB Local: Poisson arrivals at ${load * 100} % of the quota for ${seconds} s, then ${floodFactor}x the quota for ${floodSeconds} s. "Worst window" is the most any window of the run admitted over rate x window + burst (0 or less: never more than the bucket allows).\n`,
  );
  const dynamodb = await startDynamoDbLocal(await freePort(), undefined);
  const results: ReturnType<typeof summarise>[] = [];
  try {
    const { table } = await ensureTable(dynamodb.endpoint, 'live');
    await warmUp(dynamodb.endpoint, table);
    for (const [index, policy] of CONTAINERS_BENCH.policies.entries())
      results.push(summarise(policy, await simulate(dynamodb.endpoint, table, policy, `bench-containers-${index}`)));
    printTable(
      print,
      `quota (rate/s, burst) | requests at ${load * 100} % | refused | quota writes per request | take p50 | take p99 | flood admitted / allowed | worst window`,
      results.map(({ policy, steady, writesPerRequest, take, flood, worstWindowExcess }) => [
        `${policy.rate}/s, ${policy.burst}`,
        steady.sent,
        `${steady.refused} (${((steady.refused / Math.max(1, steady.sent)) * 100).toFixed(2)} %)${steady.degraded ? `, ${steady.degraded} degraded` : ''}`,
        writesPerRequest.toFixed(2),
        `${take.p50.toFixed(1)} ms`,
        `${take.p99.toFixed(1)} ms`,
        `${flood.admitted} / ${flood.allowed}`,
        worstWindowExcess.toFixed(1),
      ]),
    );
  } finally {
    await dynamodb.stop();
  }
  return results;
};
