/**
 * `npm run soak [-- --ops 2000 --faults none ...]`: the check of issues "Correct on DynamoDB as it
 * really behaves" and "After the commit, no merchant can hurt another". Not a timed test: it
 * prints figures and the violations it found, and exits 1 when there is any.
 *
 * 1. starts a fresh in-memory local stack on free ports (both stages, commission consumer on,
 *    relays and count repair every 500 ms on marks 2 s old, the webhook retry schedule compressed
 *    to a minute) with faults injected into the stage processes' AWS clients (default: 5 %
 *    throttling, 2 % lost answers after an applied write, 1 % transaction conflicts, 5 % SQS
 *    refusals, 0.5 % functions stopped after a write);
 * 2. seeds M merchants per stage (test/soak/fixtures.ts) and gives each webhook endpoints by
 *    profile (test/soak/webhooks.ts), each with a receiver of its own on 127.0.0.1 that answers,
 *    fails for seconds, hangs, flaps or answers 410 (test/soak/receivers.ts);
 * 3. runs the mixed workload (test/soak/workload.ts): V2 and legacy creates (half with an
 *    Idempotency-Key, a few with a taken order_no, a few with odd or the largest texts:
 *    test/soak/texts.ts), PATCHes, cancels, invites, accepts and declines, gets and lists,
 *    deliberate replays of keyed requests and probes with another merchant's ids; the client
 *    retries 503, 502, 409, 429 and its own timeouts like a good merchant platform
 *    (test/soak/client.ts), and records every attempt;
 * 4. waits until the change feed caught up and the queues and the follow-ups (e-mails, recounts,
 *    webhook retries) have nothing left to do (test/soak/settle.ts), bounded;
 * 5. reads the truth from the tables through the unfaulted operator store, every list and every
 *    endpoint through the API (test/soak/truth.ts, webhooks.ts), checks each invariant
 *    (test/soak/checks.ts, async-checks.ts, report-check.ts, event-log.ts) and prints the figures and the table of invariants
 *    (test/soak/report.ts); the receivers are closed whatever happened.
 *
 * `runSoak(options)` does all of it and returns the results, for a test that wants the checks.
 */

import { pathToFileURL } from 'node:url';
import { parseFaultSpec } from '#local/faults';
import { freePorts } from '#local/ports';
import { type LocalStack, startLocalStack } from '#local/stack';
import { STAGES, type Stage } from '#shared/config';
import { getCommissionLedger } from '#shared/db/entities/commission';
import { UNMETERED_QUOTA_ENV } from '#shared/quota/policy';
import { checkAsync, expectedEvents } from './soak/async-checks';
import { checkInvariants } from './soak/checks';
import { closeClient } from './soak/client';
import { startLogPollers } from './soak/event-log';
import { type SoakMerchant, seedMerchants } from './soak/fixtures';
import { finalStatus, type Op } from './soak/ops';
import { DEFAULT_OPTIONS, parseArgs, type SoakOptions, USAGE, UsageError, WEBHOOK_SCHEDULE, WEBHOOK_TIMEOUT_MS } from './soak/options';
import { createModel, DECISION_SHARE } from './soak/plan';
import { printReport, type SoakResult, tallyOps } from './soak/report';
import { checkReportTotals } from './soak/report-check';
import { createSqsClient, settle } from './soak/settle';
import { type MerchantTruth, readTruth } from './soak/truth';
import { closeReceivers, createEndpoints, readEndpointStates, type SoakEndpoint } from './soak/webhooks';
import { runWorkload } from './soak/workload';

export type { InvariantResult } from './soak/checks';
export { DEFAULT_FAULTS, DEFAULT_OPTIONS, type SoakOptions } from './soak/options';
export { printReport, type SoakResult } from './soak/report';

/**
 * The stage processes' environment: follow-ups (owed e-mails, recounts) after 2 s and the webhook
 * retry schedule compressed to a minute (options.ts), so that the run settles in seconds rather
 * than minutes or days; no rate limit (the soak is about correctness, and
 * one merchant may well send more than the WAF's 6,000 requests per 5 minutes); function logs
 * off unless --verbose (with faults on, every injected failure is logged).
 */
const workerEnv = (options: SoakOptions): Record<string, string> => ({
  ...UNMETERED_QUOTA_ENV,
  POWERTOOLS_LOG_LEVEL: options.verbose ? 'ERROR' : 'SILENT',
  FOLLOW_UP_MIN_DELAY_SECONDS: '2',
  RATE_LIMIT_PER_5_MIN: '100000000',
  WEBHOOK_RETRY_SCHEDULE_SECONDS: WEBHOOK_SCHEDULE.join(','),
  WEBHOOK_DELIVERY_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
});

/** Enough pending requests that every accept and decline of the plan finds one. */
const pendingRequestsFor = (options: SoakOptions) => Math.ceil((options.ops / (2 * options.merchants)) * DECISION_SHARE * 1.5) + 5;

const seconds = (since: number) => (performance.now() - since) / 1000;

const stderrLog = (line: string) => process.stderr.write(`${line}\n`);

/** Progress on stderr at every tenth of the plan. */
const progressLog = (log: (line: string) => void, start: number) => {
  let lastTenth = 0;
  return (done: number, total: number) => {
    const tenth = Math.floor((done / total) * 10);
    if (tenth > lastTenth) {
      lastTenth = tenth;
      log(`soak: ${done}/${total} operations, ${seconds(start).toFixed(0)} s`);
    }
  };
};

/** What `beforeChecks` gets: the stack, the merchants and the op log, to change before the truth is read. */
export type SoakHookContext = { stack: LocalStack; merchants: SoakMerchant[]; ops: Op[] };

export type SoakHooks = {
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
  /**
   * Runs after the run settled, before the truth is read: a test can break something here (a
   * count, a ledger, an answer in the log) and expect the checks to find it.
   */
  beforeChecks?: (context: SoakHookContext) => Promise<void>;
};

/**
 * Whether the change feed reached the end of the workload: the last order answered 201 of each
 * merchant has its commission ledger (the feed reads a stage's stream in order, so the orders
 * before it went through the feed too).
 */
const feedCaughtUp = (ops: readonly Op[]) => {
  const lastCreated = new Map<string, { merchant: SoakMerchant; uuid: string }>();
  for (const op of ops)
    if ((op.kind === 'create-v2' || op.kind === 'create-legacy') && finalStatus(op) === 201 && op.createdUuid)
      lastCreated.set(op.merchant.key, { merchant: op.merchant, uuid: op.createdUuid });
  return async () => {
    for (const { merchant, uuid } of lastCreated.values())
      if (!(await getCommissionLedger(merchant.store, merchant.id, uuid, true)).ledger) return false;
    return true;
  };
};

/** Reads what the stages hold once settled (every table, list, endpoint and the polled event log) and checks every invariant against it. */
const checkEverything = async (
  log: (line: string) => void,
  ops: readonly Op[],
  merchants: readonly SoakMerchant[],
  endpoints: readonly SoakEndpoint[],
  logPollers: ReturnType<typeof startLogPollers>,
  options: SoakOptions,
) => {
  log('soak: reading the tables, every list and every webhook endpoint');
  const finalReads: Op[] = [];
  const truths: MerchantTruth[] = [];
  for (const merchant of merchants) truths.push(await readTruth(merchant, (op) => finalReads.push(op)));
  const states = await readEndpointStates(endpoints, (op) => finalReads.push(op));
  const asynchronous = checkAsync({
    ops,
    truths,
    endpoints,
    states,
    scheduleAttempts: WEBHOOK_SCHEDULE.length,
    maxLagSeconds: options.maxLagSeconds,
  });
  const eventLog = await logPollers.stop((merchant) =>
    expectedEvents(truths.find((truth) => truth.merchant === merchant) as MerchantTruth).map((event) => event.id),
  );
  const reports = await checkReportTotals(truths.map(({ merchant, ledgers }) => ({ store: merchant.store, id: merchant.id, ledgers })));
  const invariants = [...checkInvariants([...ops, ...finalReads], truths), ...asynchronous.invariants, reports, eventLog];
  return { invariants, asynchronous, finalReads };
};

/** Runs the whole soak on a stack of its own and returns the figures and the invariants. */
export const runSoak = async (input: Partial<SoakOptions> = {}, hooks: SoakHooks = {}): Promise<SoakResult> => {
  const log = hooks.log ?? stderrLog;
  const options: SoakOptions = { ...DEFAULT_OPTIONS, ...input };
  const faults = parseFaultSpec(options.faults).length > 0 ? options.faults : undefined;
  const started = performance.now();
  let restarts = 0;
  log(`soak: starting the local stack (faults: ${faults ?? 'none'})`);
  const stack: LocalStack = await startLocalStack({
    ports: await freePorts(),
    seedDemo: false,
    faults,
    faultsSeed: options.seed,
    workerEnv: workerEnv(options),
    onRestart: (message) => {
      restarts++;
      log(`soak: ${message}`);
    },
  });
  const sqs = createSqsClient(stack);
  let endpoints: SoakEndpoint[] = [];
  let logPollers: ReturnType<typeof startLogPollers> | undefined;
  try {
    const merchants = (
      await Promise.all(
        STAGES.map((stage) =>
          seedMerchants(stage, stack.stages[stage].store, stack.stages[stage].url, options.merchants, pendingRequestsFor(options)),
        ),
      )
    ).flat();
    const models = merchants.map(createModel);
    endpoints = await createEndpoints(merchants);
    log(`soak: ${endpoints.length} webhook endpoints, each with its receiver on 127.0.0.1`);

    logPollers = startLogPollers(merchants);
    log(`soak: ${options.ops} operations on ${merchants.length} merchants, ${options.concurrency} at a time`);
    const workloadStart = performance.now();
    const ops = await runWorkload(
      models,
      {
        ops: options.ops,
        concurrency: options.concurrency,
        seed: options.seed,
        deadline: Date.now() + options.maxSeconds * 1000,
        plain: options.plain,
      },
      progressLog(log, workloadStart),
    );
    const workloadSeconds = seconds(workloadStart);

    log(`soak: waiting for the change feed, the queues and the follow-ups (at most ${options.settleSeconds} s)`);
    const merchantIds = Object.fromEntries(STAGES.map((stage) => [stage, merchants.filter((m) => m.stage === stage).map((m) => m.id)]));
    const settled = await settle(stack, sqs, merchantIds as Record<Stage, string[]>, options.settleSeconds, feedCaughtUp(ops));

    await hooks.beforeChecks?.({ stack, merchants, ops });
    const { invariants, asynchronous, finalReads } = await checkEverything(log, ops, merchants, endpoints, logPollers, options);
    const tally = tallyOps(ops, finalReads);
    const faultTally = await stack.faultTally();
    if (restarts > 0) log(`soak: the stage processes were restarted ${restarts} times`);
    return {
      options,
      invariants,
      violations: invariants.reduce((sum, invariant) => sum + invariant.violations.length, 0),
      figures: {
        faults: faults ?? 'none',
        merchantsPerStage: options.merchants,
        concurrency: options.concurrency,
        seed: options.seed,
        ops: ops.length,
        attempts: tally.attempts,
        retries: tally.retries,
        finalReads: tally.finalReads,
        workloadSeconds,
        settle: settled,
        totalSeconds: seconds(started),
        statuses: tally.statuses,
        kinds: tally.kinds,
        faultTally: faultTally as Record<Stage, Record<string, number>>,
        asynchronous: asynchronous.figures,
      },
    };
  } finally {
    logPollers?.halt();
    await closeReceivers(endpoints.map((endpoint) => endpoint.receiver));
    sqs.destroy();
    closeClient();
    await stack.stop();
  }
};

const main = async () => {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(process.argv.slice(2));
    parseFaultSpec(parsed.options.faults);
  } catch (error) {
    console.error(error instanceof UsageError || (error as Error).name === 'FaultSpecError' ? (error as Error).message : error);
    process.exit(2);
  }
  if (parsed.help) {
    console.log(USAGE);
    return;
  }
  const result = await runSoak(parsed.options);
  printReport(result);
  process.exitCode = result.violations > 0 ? 1 : 0;
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
