import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

/** Each port's env variable and default. */
const PORT_ENV: Record<keyof Ports, [name: string, fallback: number]> = {
  live: ['PORT', 3000],
  sandbox: ['SANDBOX_PORT', 3001],
  ses: ['SES_PORT', 8005],
  dynamodb: ['DYNAMODB_PORT', 8000],
  sqs: ['SQS_PORT', 4566],
};

const portsOf = (port: (key: keyof Ports) => number) =>
  Object.fromEntries(Object.keys(PORT_ENV).map((key) => [key, port(key as keyof Ports)])) as Ports;

export const portsFromEnv = () => portsOf((key) => envPort(...PORT_ENV[key]));

/** The environment that makes an `npm start` take these ports (what portsFromEnv reads). */
export const portsEnv = (ports: Ports): Record<string, string> =>
  Object.fromEntries(Object.entries(PORT_ENV).map(([key, [name]]) => [name, String(ports[key as keyof Ports])]));

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

export const freePorts = async () => {
  const ports: Partial<Ports> = {};
  for (const key of Object.keys(PORT_ENV) as (keyof Ports)[]) ports[key] = await freePort();
  return ports as Ports;
};

/** Where each running `npm start` records its ports and data, so the tools find it and a second stack never opens its data. */
const PORTS_FILE = resolve(import.meta.dirname, '..', '.local', 'ports.json');

/** One running `npm start`: `dynamodbEndpoint` when it uses a DynamoDB that already ran, `dataDir` when it keeps its data. */
type StackRecord = { pid: number; ports: Partial<Ports>; dynamodbEndpoint?: string; dataDir?: string };

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The records of the stacks running now, oldest first (a file of one bare record, as older versions wrote it, is one). */
const runningRecords = (file: string): StackRecord[] => {
  let content: unknown;
  try {
    content = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return [];
  }
  const records: unknown[] = Array.isArray((content as { stacks?: unknown })?.stacks)
    ? (content as { stacks: unknown[] }).stacks
    : [content];
  return records.filter(
    (record): record is StackRecord => typeof (record as StackRecord)?.pid === 'number' && alive((record as StackRecord).pid),
  );
};

/** Replaces the file in one rename, so a reader finds the old list or the new one, never half of one. */
const writeRecords = (file: string, records: StackRecord[]) => {
  if (records.length === 0) return rmSync(file, { force: true });
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ stacks: records }, null, 2)}\n`);
  renameSync(temporary, file);
};

/** Records this process's stack beside the others that run. */
export const recordRunningStack = (stack: Omit<StackRecord, 'pid'>, file = PORTS_FILE) =>
  writeRecords(file, [...runningRecords(file).filter(({ pid }) => pid !== process.pid), { pid: process.pid, ...stack }]);

/** Removes this process's record, leaving the other stacks' as they are. */
export const forgetRunningStack = (file = PORTS_FILE) => {
  const records = runningRecords(file);
  if (records.some(({ pid }) => pid === process.pid))
    writeRecords(
      file,
      records.filter(({ pid }) => pid !== process.pid),
    );
};

/** Another running stack that keeps its data in `dataDir` (two DynamoDB Locals on one file would share its tables and stream). */
export const stackKeepingData = (dataDir: string, file = PORTS_FILE): StackRecord | undefined =>
  runningRecords(file).find((record) => record.pid !== process.pid && record.dataDir === dataDir);

/** The ports of the running `npm start` (the last one started, from PORTS_FILE), each overridden by its env variable. */
export const runningStackPorts = (file = PORTS_FILE): Ports & { recorded: boolean } => {
  const recorded = runningRecords(file).at(-1)?.ports;
  const ports = portsOf((key) => {
    const [name, fallback] = PORT_ENV[key];
    return process.env[name] ? envPort(name, fallback) : (recorded?.[key] ?? fallback);
  });
  return { ...ports, recorded: recorded !== undefined };
};

/** The running `npm start`'s DynamoDB endpoint: its `--dynamodb-endpoint`, else its DynamoDB Local's port; DYNAMODB_PORT overrides both. */
export const runningDynamoDbEndpoint = (file = PORTS_FILE): string => {
  const given = process.env.DYNAMODB_PORT ? undefined : runningRecords(file).at(-1)?.dynamodbEndpoint;
  return given ?? `http://127.0.0.1:${runningStackPorts(file).dynamodb}`;
};
