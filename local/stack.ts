import { type ChildProcess, fork } from 'node:child_process';
import { on } from 'node:events';
import { resolve } from 'node:path';
import type { SeedResult } from '#shared/admin/seed';
import { createStore, type Store } from '#shared/admin/store';
import { STAGES, type Stage } from '#shared/config';
import { getMerchant } from '#shared/db/entities/merchant';
import { QUEUE_IDS, QUEUES } from '#shared/db/table-def';
import { errorName } from '#shared/errors';
import { LOCAL_AWS_ENV, LOCAL_MAIL_DEFAULTS, LOCAL_WEBHOOK_KEY, localInviteLinkBase, useLocalAwsEnv } from './aws-env';
import { DEMO, seedDemo } from './demo';
import { type Emulator, startDynamoDbLocal, startSesEmulator, startSqsEmulator, stopProcess } from './emulators';
import { FAULT_TALLY_REQUEST, parseFaultSpec } from './faults';
import { assertPortsFree, type Ports } from './ports';
import { ensureQueues, ensureTable, type StageQueues } from './resources';
import { isStageAnswer } from './stage-hooks';

const ROOT = resolve(import.meta.dirname, '..');

/** Where `npm start` keeps its data under `.local/`, named by the table layout's version so an older layout is never misread. */
export const LOCAL_DATA_DIR = 'dynamodb-v2';

export type LocalStackOptions = {
  ports: Ports;
  /** Where DynamoDB Local keeps its data; undefined runs in memory. */
  dataDir?: string;
  seedDemo?: boolean;
  /** Extra environment for the stage processes (log level, cache TTL, LOCAL_STAGE_HOOKS of local/stage-hooks.ts). */
  workerEnv?: Record<string, string>;
  /** An emulator process died (or a stage process keeps dying): the stack cannot serve any more (default: printed). */
  onFatal?: (message: string) => void;
  /** A stage process died and was restarted (default: printed). */
  onRestart?: (message: string) => void;
  /** Faults injected into the functions' AWS SDK clients (a SPEC of local/faults.ts). */
  faults?: string;
  /** Seed of the fault draws, for a repeatable run. */
  faultsSeed?: number;
  /** Let a request bring its own fault rules in the x-local-faults header (the integration tests). */
  faultsHeader?: boolean;
  /** A DynamoDB that already runs (DynamoDB Local of a team, anything that speaks its protocol): no DynamoDB Local is started. */
  dynamodbEndpoint?: string;
};

/** Asks a stage process for something it keeps (local/stage-hooks.ts); undefined when it is gone or silent for `timeoutMs`. */
const askStage = async (child: ChildProcess | undefined, request: string, timeoutMs: number): Promise<unknown> => {
  if (!child?.connected) return undefined;
  const messages = on(child, 'message', { signal: AbortSignal.timeout(timeoutMs) });
  child.send(request);
  try {
    for await (const [message] of messages) if (isStageAnswer(message, request)) return message.value;
  } catch (error) {
    if (errorName(error) !== 'AbortError') throw error;
  }
  return undefined;
};

/** A stage process dying more often than this within a minute is not restarted again. */
const MAX_RESTARTS_PER_MINUTE = 5;

export type StageInfo = StageQueues & { table: string; streamArn: string; url: string; store: Store };

export type LocalStack = Awaited<ReturnType<typeof startLocalStack>>;

type Endpoints = { dynamodb: string; sqs: string; ses: string };

/** The environment a deployed function of this stage gets, pointed at the emulators. */
export const stageEnvironment = (stage: Stage, info: Pick<StageInfo, 'table' | 'streamArn' | 'queueUrls'>, endpoints: Endpoints) => ({
  ...LOCAL_AWS_ENV,
  AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
  AWS_ENDPOINT_URL_SQS: endpoints.sqs,
  AWS_ENDPOINT_URL_SES: endpoints.ses,
  STAGE: stage,
  TABLE_NAME: info.table,
  TABLE_STREAM_ARN: info.streamArn,
  ...Object.fromEntries(QUEUE_IDS.map((queue) => [QUEUES[queue].envVar, info.queueUrls[queue]])),
  MAIL_FROM: process.env.MAIL_FROM ?? LOCAL_MAIL_DEFAULTS.MAIL_FROM,
  INVITE_LINK_BASE_URL: process.env.INVITE_LINK_BASE_URL ?? LOCAL_MAIL_DEFAULTS.INVITE_LINK_BASE_URL,
  POWERTOOLS_LOG_LEVEL: process.env.LOG_LEVEL ?? 'WARN',
  // Locally a follow-up waits 10 s, not the deployed 60 s (functions/workers.ts).
  FOLLOW_UP_MIN_DELAY_SECONDS: '10',
  // Webhooks may target http://localhost (the local webhook inbox among others): the banner says so.
  WEBHOOKS_ALLOW_LOCAL_TARGETS: 'true',
  WEBHOOK_SECRET_KEY: process.env.WEBHOOK_SECRET_KEY ?? LOCAL_WEBHOOK_KEY,
});

/** One stage's process (local/stage-worker.ts) serving on `port`; resolves once it listens. */
export const startWorker = (stage: Stage, port: number, env: Record<string, string>) =>
  new Promise<ChildProcess>((resolvePromise, reject) => {
    const child = fork(resolve(ROOT, 'local/stage-worker.ts'), [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...env, LOCAL_HTTP_PORT: String(port) },
      stdio: 'inherit',
    });
    child.once('message', () => resolvePromise(child));
    child.once('exit', (code) => reject(new Error(`${stage} stage process exited with code ${code}`)));
  });

/** A stage process's environment: its stage's resources, the faults asked for, its stream checkpoints when data is kept, and what the caller adds. */
const workerEnvOf = (
  stage: Stage,
  info: StageInfo,
  endpoints: Endpoints,
  options: LocalStackOptions,
  faulty: boolean,
): Record<string, string> => ({
  ...stageEnvironment(stage, info, endpoints),
  INVITE_LINK_BASE_URL: process.env.INVITE_LINK_BASE_URL ?? localInviteLinkBase(options.ports.live),
  ...(faulty ? { LOCAL_FAULTS: options.faults ?? '' } : {}),
  ...(options.faultsSeed !== undefined ? { LOCAL_FAULTS_SEED: String(options.faultsSeed) } : {}),
  ...(options.faultsHeader ? { LOCAL_FAULTS_HEADER: 'on' } : {}),
  // Kept data keeps its stream: where the change feed stopped, so a restart does not replay it all.
  ...(options.dataDir && !options.dynamodbEndpoint
    ? { LOCAL_STREAM_CHECKPOINTS: resolve(options.dataDir, `stream-checkpoints-${stage}.json`) }
    : {}),
  ...options.workerEnv,
});

/** Each stage's table and queues (created when missing), its store, and the demo merchant when asked for. */
const prepareStages = async (endpoints: Endpoints, options: LocalStackOptions) => {
  const stages = {} as Record<Stage, StageInfo>;
  // The demo seed's result per stage, when it was seeded by this start.
  const demo: Partial<Record<Stage, SeedResult>> = {};
  for (const stage of STAGES) {
    const { table, streamArn } = await ensureTable(endpoints.dynamodb, stage);
    const queues = await ensureQueues(endpoints.sqs, stage);
    const store = createStore(table, endpoints.dynamodb);
    if (options.seedDemo && !(await getMerchant(store, DEMO.merchantId, true)))
      demo[stage] = await seedDemo(store, stage, options.ports[stage]);
    stages[stage] = { table, streamArn, ...queues, store, url: `http://127.0.0.1:${options.ports[stage]}` };
  }
  return { stages, demo };
};

/** Starts the emulators, each stage's table and queues, the demo merchant (first start only) and one process per stage. */
export const startLocalStack = async (options: LocalStackOptions) => {
  const { ports } = options;
  useLocalAwsEnv();
  const started: Emulator[] = [];
  const workers = new Map<Stage, ChildProcess>();
  const onFatal = options.onFatal ?? ((message: string) => console.error(message));
  const onRestart = options.onRestart ?? ((message: string) => console.error(message));
  let stopping = false;
  const stop = async () => {
    stopping = true;
    await Promise.all([...workers.values()].map(stopProcess));
    await Promise.allSettled(started.reverse().map((emulator) => emulator.stop()));
  };
  try {
    const faults = parseFaultSpec(options.faults ?? '');
    // A DynamoDB that already runs is given by URL, and is not this stack's port to check.
    await assertPortsFree(options.dynamodbEndpoint ? { ...ports, dynamodb: undefined } : ports);
    const dynamodb = options.dynamodbEndpoint
      ? { endpoint: options.dynamodbEndpoint }
      : await startDynamoDbLocal(ports.dynamodb, options.dataDir, (code, signal) => {
          if (!stopping)
            onFatal(
              `DynamoDB Local (port ${ports.dynamodb}) exited (${signal ?? `code ${code}`}): the local stack cannot serve without it.`,
            );
        });
    if ('stop' in dynamodb) started.push(dynamodb);
    const sqs = await startSqsEmulator(ports.sqs);
    started.push(sqs);
    const ses = await startSesEmulator(ports.ses);
    started.push(ses);
    const endpoints = { dynamodb: dynamodb.endpoint, sqs: sqs.endpoint, ses: ses.endpoint };

    const { stages, demo } = await prepareStages(endpoints, options);
    // A stage process that dies is started again (one line says so), unless it keeps dying.
    const launch = async (stage: Stage, env: Record<string, string>, restarts: number[]) => {
      const child = await startWorker(stage, ports[stage], env);
      if (stopping) return stopProcess(child);
      workers.set(stage, child);
      child.once('exit', (code, signal) => {
        if (stopping) return;
        const now = Date.now();
        const recent = [...restarts.filter((time) => time > now - 60_000), now];
        const how = signal ?? `code ${code}`;
        if (recent.length > MAX_RESTARTS_PER_MINUTE)
          return onFatal(`The ${stage} stage process died ${recent.length} times within a minute (last: ${how}); not restarting it.`);
        onRestart(`The ${stage} stage process exited (${how}); restarting it on port ${ports[stage]}.`);
        launch(stage, env, recent).catch((error: Error) => onFatal(`Could not restart the ${stage} stage process: ${error.message}`));
      });
    };
    await Promise.all(STAGES.map((stage) => launch(stage, workerEnvOf(stage, stages[stage], endpoints, options, faults.length > 0), [])));
    // Each stage's answer to `request` (a module of workerEnv LOCAL_STAGE_HOOKS answers it), undefined where none came in time.
    const ask = async <T>(request: string, timeoutMs = 10_000) => {
      const answers = await Promise.all(STAGES.map((stage) => askStage(workers.get(stage), request, timeoutMs)));
      return Object.fromEntries(STAGES.map((stage, index) => [stage, answers[index]])) as Record<Stage, T | undefined>;
    };
    // How often each fault rule fired so far, per stage.
    const faultTally = async () => {
      const tallies = await ask<Record<string, number>>(FAULT_TALLY_REQUEST, 1_000);
      return Object.fromEntries(STAGES.map((stage) => [stage, tallies[stage] ?? {}])) as Record<Stage, Record<string, number>>;
    };
    return { ports, endpoints, stages, demo, faultTally, ask, stop };
  } catch (error) {
    await stop();
    throw error;
  }
};
