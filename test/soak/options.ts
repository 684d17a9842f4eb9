/**
 * The soak's options: defaults, and the command line that sets them (`npm run soak -- --help`).
 */

/** The faults the soak runs with unless told otherwise (local/faults.ts reads the SPEC). */
export const DEFAULT_FAULTS =
  'dynamodb:throttle=5%,dynamodb.write:lost=2%,dynamodb.write:conflict=1%,sqs:refuse=5%,dynamodb.write:stop=0.5%';

/**
 * The webhook retry schedule the soak gives the stage processes (seconds before each attempt):
 * the Standard Webhooks shape (immediately, then ever longer waits) compressed so that a given-up
 * delivery is given up within a minute, not three days. Every outage of the receivers
 * (receivers.ts, WINDOWS) is far shorter than it.
 */
export const WEBHOOK_SCHEDULE = [0, 1, 2, 4, 8, 15, 30];
/** The soak's delivery timeout: a hanging receiver holds a deliverer this long. */
export const WEBHOOK_TIMEOUT_MS = 1_500;

export type SoakOptions = {
  /** Logical operations of the workload, across both stages (retries and the final reads come on top). */
  ops: number;
  /** Merchants per stage. */
  merchants: number;
  /** Operations in flight at once. */
  concurrency: number;
  /** Fault SPEC for the stage processes; 'none' runs without faults. */
  faults: string;
  /**
   * Seed of the workload's PRNG (choices, bodies, values) and of the stage processes' fault draws:
   * the same seed gives the same plan, not the same interleaving (so not quite the same faults).
   */
  seed: number;
  /** The workload stops issuing operations after this many seconds, whatever `ops` says. */
  maxSeconds: number;
  /** How long to wait, at most, for the queue, the relays and the count repair to settle before checking. */
  settleSeconds: number;
  /** Let the functions' ERROR logs through (off by default: with faults on they log every injected failure). */
  verbose: boolean;
  /** Print the first violations of each invariant (up to this many). */
  showViolations: number;
  /** A healthy merchant's order must leave the change feed within this many seconds of its 201. */
  maxLagSeconds: number;
  /** Leave the odd and the largest texts out (a baseline for the lags). */
  plain: boolean;
};

export const DEFAULT_OPTIONS: SoakOptions = {
  ops: 20_000,
  merchants: 4,
  concurrency: 16,
  faults: DEFAULT_FAULTS,
  seed: 1,
  maxSeconds: 3600,
  settleSeconds: 400,
  verbose: false,
  showViolations: 5,
  maxLagSeconds: 15,
  plain: false,
};

export const USAGE = `npm run soak -- [options]

Runs a mixed workload against a fresh in-memory local stack (both stages) with faults injected
into the stage processes' AWS clients and webhook receivers on 127.0.0.1 that answer, fail for
seconds, hang, flap or answer 410, then checks the invariants of "Correct on DynamoDB as it really
behaves" and of the asynchronous side (webhooks, the change feed's lag, commissions, odd texts)
and prints, per invariant, the violations found. Exit code 1 when any violation is found.

  --ops N            logical operations, both stages together (default ${DEFAULT_OPTIONS.ops})
  --merchants M      merchants per stage (default ${DEFAULT_OPTIONS.merchants})
  --concurrency C    operations in flight (default ${DEFAULT_OPTIONS.concurrency})
  --faults SPEC      fault rules, or 'none' (default ${DEFAULT_FAULTS})
  --seed S           seed of the workload's PRNG and of the fault draws (default ${DEFAULT_OPTIONS.seed})
  --max-seconds T    stop issuing operations after T seconds (default ${DEFAULT_OPTIONS.maxSeconds})
  --settle-seconds T wait at most T seconds for the change feed, the queues and the follow-ups (default ${DEFAULT_OPTIONS.settleSeconds})
  --show N           print up to N violations per invariant (default ${DEFAULT_OPTIONS.showViolations})
  --max-lag-seconds T  a healthy merchant's order leaves the change feed within T s (default ${DEFAULT_OPTIONS.maxLagSeconds})
  --plain            no odd or largest texts (a baseline)
  --verbose          let the functions' ERROR logs through
  --help             this text`;

export class UsageError extends Error {
  override name = 'UsageError';
}

const positiveInteger = (flag: string, value: string | undefined) => {
  const number = Number(value);
  if (value === undefined || !Number.isInteger(number) || number < 1) throw new UsageError(`${flag} takes a positive integer`);
  return number;
};

const nonNegativeInteger = (flag: string, value: string | undefined) => {
  const number = Number(value);
  if (value === undefined || !Number.isInteger(number) || number < 0) throw new UsageError(`${flag} takes a non-negative integer`);
  return number;
};

/** Parses the command line; `help: true` when --help was given. */
export const parseArgs = (argv: readonly string[]): { options: SoakOptions; help: boolean } => {
  const options = { ...DEFAULT_OPTIONS };
  let help = false;
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index];
    const value = argv[index + 1];
    switch (flag) {
      case '--help':
      case '-h':
        help = true;
        break;
      case '--verbose':
        options.verbose = true;
        break;
      case '--plain':
        options.plain = true;
        break;
      case '--max-lag-seconds':
        options.maxLagSeconds = positiveInteger(flag, value);
        index++;
        break;
      case '--ops':
        options.ops = positiveInteger(flag, value);
        index++;
        break;
      case '--merchants':
        options.merchants = positiveInteger(flag, value);
        index++;
        break;
      case '--concurrency':
        options.concurrency = positiveInteger(flag, value);
        index++;
        break;
      case '--seed':
        options.seed = nonNegativeInteger(flag, value);
        index++;
        break;
      case '--max-seconds':
        options.maxSeconds = positiveInteger(flag, value);
        index++;
        break;
      case '--settle-seconds':
        options.settleSeconds = nonNegativeInteger(flag, value);
        index++;
        break;
      case '--show':
        options.showViolations = nonNegativeInteger(flag, value);
        index++;
        break;
      case '--faults':
        if (value === undefined || value.trim() === '') throw new UsageError("--faults takes a SPEC, or 'none'");
        options.faults = value.trim();
        index++;
        break;
      default:
        throw new UsageError(`unknown option ${flag} (see --help)`);
    }
  }
  return { options, help };
};
