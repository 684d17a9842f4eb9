import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';

/** The local stack's ports: defaults, overridable by env (docs/architecture.md, "Local shape"). */
export type Ports = { live: number; sandbox: number; ses: number; dynamodb: number; sqs: number };

const envPort = (name: string, fallback: number) => {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name} must be a port number, got ${value}`);
  return port;
};

export const portsFromEnv = (): Ports => ({
  live: envPort('PORT', 3000),
  sandbox: envPort('SANDBOX_PORT', 3001),
  ses: envPort('SES_PORT', 8005),
  dynamodb: envPort('DYNAMODB_PORT', 8000),
  sqs: envPort('SQS_PORT', 4566),
});

/** Whether something listens on this loopback port now (port 0 is chosen when listening: never taken). */
const isTaken = (port: number) =>
  new Promise<boolean>((resolvePromise) => {
    if (port === 0) return resolvePromise(false);
    const server = createServer();
    server.once('error', () => resolvePromise(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolvePromise(false)));
  });

/** Ports a stack was told to use that something else listens on: it would share that one's data, or fail half-started. */
export class PortsTakenError extends Error {
  override name = 'PortsTakenError';
}

/** Refuses, in one message, every port of `ports` that is in use. */
export const assertPortsFree = async (ports: Partial<Ports>) => {
  const taken: string[] = [];
  for (const [name, port] of Object.entries(ports)) if (port !== undefined && (await isTaken(port))) taken.push(`${port} (${name})`);
  if (taken.length > 0)
    throw new PortsTakenError(
      `Port${taken.length > 1 ? 's' : ''} in use: ${taken.join(', ')}. Another local stack may be running: stop it, or move this one with PORT, SANDBOX_PORT, SES_PORT, DYNAMODB_PORT and SQS_PORT.`,
    );
};

/** A port nobody listens on right now (for tests that start their own stack). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });

export const freePorts = async (): Promise<Ports> => ({
  live: await freePort(),
  sandbox: await freePort(),
  ses: await freePort(),
  dynamodb: await freePort(),
  sqs: await freePort(),
});

/**
 * Where a running `npm start` records its ports, so `npm run invoke` (and anything else on this
 * machine) finds it without the port env. Written at start, removed at exit; a file left by a
 * process that no longer runs is ignored.
 */
export const PORTS_FILE = resolve(import.meta.dirname, '..', '.local', 'ports.json');

/** `dynamodbEndpoint`: the DynamoDB the stack uses when it did not start its own (`--dynamodb-endpoint`). */
export const writePortsFile = (ports: Ports, file = PORTS_FILE, dynamodbEndpoint?: string) => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ pid: process.pid, ports, ...(dynamodbEndpoint ? { dynamodbEndpoint } : {}) }, null, 2)}\n`);
};

export const removePortsFile = (file = PORTS_FILE) => {
  try {
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as { pid?: number };
    if (recorded.pid === process.pid) rmSync(file, { force: true });
  } catch {
    // nothing recorded, or not ours
  }
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

type Recorded = { ports?: Partial<Ports>; dynamodbEndpoint?: string };

/** What the running `npm start` recorded (undefined when none runs). */
const readRecorded = (file: string): Recorded | undefined => {
  try {
    const content = JSON.parse(readFileSync(file, 'utf8')) as { pid?: number } & Recorded;
    return typeof content.pid === 'number' && alive(content.pid) ? content : undefined;
  } catch {
    return undefined;
  }
};

/** The ports of the running `npm start` (from PORTS_FILE), each overridden by its env variable. */
export const runningStackPorts = (file = PORTS_FILE): Ports & { recorded: boolean } => {
  const recorded = readRecorded(file)?.ports;
  const defaults = portsFromEnv();
  const fromEnv = (name: string, key: keyof Ports) =>
    process.env[name] !== undefined && process.env[name] !== '' ? defaults[key] : (recorded?.[key] ?? defaults[key]);
  return {
    live: fromEnv('PORT', 'live'),
    sandbox: fromEnv('SANDBOX_PORT', 'sandbox'),
    ses: fromEnv('SES_PORT', 'ses'),
    dynamodb: fromEnv('DYNAMODB_PORT', 'dynamodb'),
    sqs: fromEnv('SQS_PORT', 'sqs'),
    recorded: recorded !== undefined,
  };
};

/**
 * The DynamoDB endpoint of the running `npm start`: the one it was given with
 * `--dynamodb-endpoint`, else its DynamoDB Local's port; DYNAMODB_PORT overrides both.
 */
export const runningDynamoDbEndpoint = (file = PORTS_FILE): string => {
  const given = process.env.DYNAMODB_PORT ? undefined : readRecorded(file)?.dynamodbEndpoint;
  return given ?? `http://127.0.0.1:${runningStackPorts(file).dynamodb}`;
};
