import type { Stage } from '#shared/config';
import type { AsyncFigures, LagFigures } from './async-checks';
import type { InvariantResult } from './checks';
import { finalStatus, hadAmbiguousAttempt, type Op } from './ops';
import { type SoakOptions, WEBHOOK_SCHEDULE, WEBHOOK_TIMEOUT_MS } from './options';
import { WINDOWS } from './receivers';
import type { SettleResult } from './settle';

/**
 * The soak's figures and the invariant table, as markdown (like harness/bench.ts), so a run can
 * be pasted into the docs as it is printed.
 */

export type SoakFigures = {
  faults: string;
  merchantsPerStage: number;
  concurrency: number;
  seed: number;
  /** Logical operations of the workload (the final reads not included). */
  ops: number;
  /** HTTP attempts of those operations. */
  attempts: number;
  /** Attempts beyond the first of each operation. */
  retries: number;
  /** HTTP requests of the final list reads. */
  finalReads: number;
  workloadSeconds: number;
  settle: SettleResult;
  totalSeconds: number;
  /** Attempts by status, workload and final reads together. */
  statuses: Record<string, number>;
  /**
   * Per operation kind: how many, their final statuses, how many were retried, and how many were
   * finally told something else than a correct service answers, without an ambiguous attempt
   * before (after one, an unkeyed retry may rightly be told 422: the first attempt was applied).
   */
  kinds: Record<string, { ops: number; finals: Record<string, number>; retried: number; unexpected: number }>;
  /** How often each fault rule fired, per stage ({} when the stack could not say). */
  faultTally: Record<Stage, Record<string, number>>;
  /** Webhook receivers, lags and texts (async-checks.ts). */
  asynchronous: AsyncFigures;
};

export type SoakResult = { options: SoakOptions; figures: SoakFigures; invariants: InvariantResult[]; violations: number };

const count = (value: number) => value.toLocaleString('en-US');
const increment = (into: Record<string, number>, key: string) => {
  into[key] = (into[key] ?? 0) + 1;
};

/** Figures that follow from the op log alone. */
export const tallyOps = (workload: readonly Op[], finalReads: readonly Op[]) => {
  const statuses: Record<string, number> = {};
  const kinds: SoakFigures['kinds'] = {};
  for (const op of [...workload, ...finalReads]) for (const attempt of op.attempts) increment(statuses, String(attempt.status));
  for (const op of workload) {
    const kind = kinds[op.kind] ?? { ops: 0, finals: {}, retried: 0, unexpected: 0 };
    kinds[op.kind] = kind;
    kind.ops++;
    const status = finalStatus(op);
    increment(kind.finals, String(status));
    if (op.attempts.length > 1) kind.retried++;
    const refused = op.refusable && (status === 413 || status === 422);
    if (status !== op.expect && !refused && !hadAmbiguousAttempt(op)) kind.unexpected++;
  }
  const attempts = workload.reduce((sum, op) => sum + op.attempts.length, 0);
  return {
    statuses,
    kinds,
    attempts,
    retries: attempts - workload.length,
    finalReads: finalReads.reduce((sum, op) => sum + op.attempts.length, 0),
  };
};

const table = (title: string, head: string[], rows: (string | number)[][]) => {
  console.log(`\n### ${title}\n`);
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
};

const byCount = (record: Record<string, number>) =>
  Object.entries(record)
    .sort(([, a], [, b]) => b - a)
    .map(([key, n]) => `${count(n)} x ${key}`)
    .join(', ');

const lagCells = (lag: LagFigures) =>
  lag.count === 0
    ? ['-', '-', '-', `0 of ${lag.missing}`]
    : [
        lag.p50.toFixed(2),
        lag.p99.toFixed(2),
        lag.max.toFixed(2),
        `${count(lag.count)}${lag.missing > 0 ? ` (**${lag.missing} never**)` : ''}`,
      ];

const RECEIVER_BEHAVIOURS = {
  ok: 'answers 200',
  outage: `503 for ${WINDOWS.outage.downMs / 1000} s of every ${WINDOWS.outage.periodMs / 1000} s`,
  hang: `no answer for ${WINDOWS.hang.downMs / 1000} s of every ${WINDOWS.hang.periodMs / 1000} s (timeout ${WEBHOOK_TIMEOUT_MS / 1000} s)`,
  flap: `down ${WINDOWS.flap.downMs / 1000} s, up ${(WINDOWS.flap.periodMs - WINDOWS.flap.downMs) / 1000} s`,
  gone: '410 Gone',
};

/** The asynchronous side: receivers, lags from a 201 (seconds) and the texts' answers. */
const printAsync = (figures: AsyncFigures) => {
  table(
    `Webhook receivers (retry schedule ${WEBHOOK_SCHEDULE.join(', ')} s)`,
    ['behaviour', 'endpoints', 'requests', 'answered 2xx', 'hung', 'verified'],
    Object.entries(figures.receivers).map(([behaviour, row]) => [
      `${behaviour}: ${RECEIVER_BEHAVIOURS[behaviour as keyof typeof RECEIVER_BEHAVIOURS]}`,
      row.endpoints,
      count(row.requests),
      count(row.ok),
      count(row.hung),
      count(row.verified),
    ]),
  );
  table(
    "Lag after an order's 201, seconds (feed: its order.created attempted anywhere or its commission booked; delivery: first 2xx at an always-up endpoint)",
    [
      'merchant profile',
      'feed p50',
      'p99',
      'max',
      'orders',
      'delivery p50',
      'p99',
      'max',
      'orders',
      'commission p50',
      'p99',
      'max',
      'orders',
    ],
    Object.entries(figures.lags).map(([profile, lag]) => [
      profile,
      ...lagCells(lag.feed),
      ...lagCells(lag.delivery),
      ...lagCells(lag.commission),
    ]),
  );
  table(
    "order.created answered 2xx by each kind of receiver, seconds after the order's 201 (every merchant)",
    ['receiver', 'p50', 'p99', 'max', 'orders'],
    Object.entries(figures.deliveryByBehaviour).map(([behaviour, lag]) => [behaviour, ...lagCells(lag)]),
  );
  if (Object.keys(figures.texts).length > 0)
    table(
      'Creates with odd and largest texts (final status)',
      ['text', 'final statuses'],
      Object.entries(figures.texts)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([text, finals]) => [text, byCount(finals)]),
    );
};

export const printReport = (result: SoakResult) => {
  const { figures, invariants, options } = result;
  console.log(`## npm run soak (${new Date().toISOString()})`);
  table(
    'Run',
    ['faults', 'merchants', 'concurrency', 'seed', 'operations', 'HTTP attempts', 'retries', 'workload', 'ops/s', 'settle', 'total'],
    [
      [
        `\`${figures.faults}\``,
        `${figures.merchantsPerStage} per stage`,
        figures.concurrency,
        figures.seed,
        `${count(figures.ops)} of ${count(options.ops)}`,
        count(figures.attempts),
        count(figures.retries),
        `${figures.workloadSeconds.toFixed(1)} s`,
        (figures.ops / figures.workloadSeconds).toFixed(1),
        `${figures.settle.seconds.toFixed(1)} s${figures.settle.settled ? '' : ' (NOT settled)'}`,
        `${figures.totalSeconds.toFixed(1)} s`,
      ],
    ],
  );
  table(
    'Statuses of every HTTP attempt (workload and final reads)',
    ['status', 'attempts'],
    Object.entries(figures.statuses)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, n]) => [status, count(n)]),
  );
  table(
    'Operations by kind (final status after retries)',
    ['kind', 'operations', 'final statuses', 'retried', 'other than expected, with no ambiguous attempt'],
    Object.entries(figures.kinds)
      .sort(([, a], [, b]) => b.ops - a.ops)
      .map(([kind, figure]) => [kind, count(figure.ops), byCount(figure.finals), count(figure.retried), figure.unexpected]),
  );
  const rules = [...new Set(Object.values(figures.faultTally).flatMap((tally) => Object.keys(tally)))];
  if (rules.length > 0)
    table(
      'Faults injected (stage processes)',
      ['rule', 'live', 'sandbox'],
      rules.map((rule) => [`\`${rule}\``, count(figures.faultTally.live[rule] ?? 0), count(figures.faultTally.sandbox[rule] ?? 0)]),
    );
  table(
    'Left owed after settling',
    [
      'stage',
      'queue messages',
      'dead letters',
      'follow-ups',
      'parked',
      'recount marks',
      'e-mails owed',
      'webhook messages',
      'webhook deliveries parked',
      'webhook dead letters',
    ],
    Object.entries(figures.settle.backlog).map(([stage, backlog]) => [
      stage,
      backlog.messages,
      backlog.deadLetters,
      backlog.followUps,
      backlog.parked,
      backlog.recount,
      backlog.notify,
      backlog.webhooks,
      backlog.webhooksParked,
      backlog.webhookDeadLetters,
    ]),
  );
  printAsync(figures.asynchronous);
  table(
    'Invariants',
    ['invariant', 'checked', 'violations', 'noted (not violations)'],
    invariants.map((invariant) => [
      invariant.title,
      count(invariant.checked),
      invariant.violations.length === 0 ? '0' : `**${count(invariant.violations.length)}**`,
      byCount(Object.fromEntries(invariant.notes)) || '-',
    ]),
  );
  for (const invariant of invariants) {
    if (invariant.violations.length === 0 || options.showViolations === 0) continue;
    console.log(
      `\n#### ${invariant.id}: first ${Math.min(options.showViolations, invariant.violations.length)} of ${invariant.violations.length}\n`,
    );
    for (const violation of invariant.violations.slice(0, options.showViolations)) console.log(`- ${violation}`);
  }
  console.log(`\n${result.violations === 0 ? 'No violations.' : `${count(result.violations)} violations.`}`);
};
