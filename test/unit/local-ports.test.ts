import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  forgetRunningStack,
  freePorts,
  PortsTakenError,
  portsEnv,
  portsFromEnv,
  recordRunningStack,
  runningStackPorts,
  stackKeepingData,
} from '#local/ports';
import { startLocalStack } from '#local/stack';

/** `npm start` records its ports so that `npm run invoke` finds it without the port env, and the data it keeps. */

const PORTS = { live: 4100, sandbox: 4101, ses: 4102, dynamodb: 4103, sqs: 4104 };
const OTHER_PORTS = { live: 4200, sandbox: 4201, ses: 4202, dynamodb: 4203, sqs: 4204 };
const tempFile = () => join(mkdtempSync(join(tmpdir(), 'ports-')), 'ports.json');
/** A process that runs and is not this one: the test runner's parent. */
const OTHER_PID = process.ppid;
const recordOf = (pid: number, ports: typeof PORTS, dataDir?: string) => ({ pid, ports, ...(dataDir ? { dataDir } : {}) });

describe('recorded local ports', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('finds the ports a running stack recorded', () => {
    const file = tempFile();
    recordRunningStack({ ports: PORTS }, file);

    const ports = runningStackPorts(file);

    expect(ports).toEqual({ ...PORTS, recorded: true });
  });

  it('lets the port env override a recorded port', () => {
    const file = tempFile();
    recordRunningStack({ ports: PORTS }, file);
    vi.stubEnv('DYNAMODB_PORT', '9999');

    const ports = runningStackPorts(file);

    expect(ports.dynamodb).toBe(9999);
    expect(ports.sqs).toBe(4104);
  });

  it('ignores a file left by a process that no longer runs', () => {
    const file = tempFile();
    writeFileSync(file, JSON.stringify({ pid: 2 ** 22 + 12345, ports: PORTS }));

    const ports = runningStackPorts(file);

    expect(ports.recorded).toBe(false);
    expect(ports.live).toBe(3000);
  });

  it('reads a file of one bare record, as older versions wrote it', () => {
    const file = tempFile();
    writeFileSync(file, JSON.stringify({ pid: OTHER_PID, ports: PORTS }));

    const ports = runningStackPorts(file);

    expect(ports).toEqual({ ...PORTS, recorded: true });
  });

  it('finds the stack started last while two run, and the first one again once the last has stopped', () => {
    // Prepare: another stack runs; this process starts a second one on other ports.
    const file = tempFile();
    writeFileSync(file, JSON.stringify({ stacks: [recordOf(OTHER_PID, PORTS)] }));
    recordRunningStack({ ports: OTHER_PORTS }, file);
    const whileBoth = runningStackPorts(file);

    // Act
    forgetRunningStack(file);

    // Assess
    expect(whileBoth.live).toBe(OTHER_PORTS.live);
    expect(runningStackPorts(file)).toEqual({ ...PORTS, recorded: true });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ stacks: [recordOf(OTHER_PID, PORTS)] });
  });

  it('removes the file when the last running stack stops, and drops the records of stacks that no longer run', () => {
    const file = tempFile();
    writeFileSync(file, JSON.stringify({ stacks: [recordOf(2 ** 22 + 12345, OTHER_PORTS)] }));
    recordRunningStack({ ports: PORTS }, file);
    const recorded = JSON.parse(readFileSync(file, 'utf8'));

    forgetRunningStack(file);

    expect(recorded).toEqual({ stacks: [recordOf(process.pid, PORTS)] });
    expect(existsSync(file)).toBe(false);
  });
});

describe('a second npm start keeping its data where a running one does', () => {
  it('is told which stack keeps that data (two DynamoDB Locals on one file would share its tables and stream)', () => {
    // Prepare
    const file = tempFile();
    writeFileSync(file, JSON.stringify({ stacks: [recordOf(OTHER_PID, PORTS, '/data/kept')] }));

    // Act
    const keeper = stackKeepingData('/data/kept', file);

    // Assess
    expect(keeper).toEqual(recordOf(OTHER_PID, PORTS, '/data/kept'));
    expect(stackKeepingData('/data/other', file)).toBeUndefined();
  });

  it('is not held back by its own record, nor by a stack that no longer runs', () => {
    const file = tempFile();
    writeFileSync(file, JSON.stringify({ stacks: [recordOf(2 ** 22 + 12345, PORTS, '/data/kept')] }));
    recordRunningStack({ ports: OTHER_PORTS, dataDir: '/data/kept' }, file);

    expect(stackKeepingData('/data/kept', file)).toBeUndefined();
  });
});

describe('a local stack told to use a port something else listens on', () => {
  it("refuses at once, naming the port, before it starts anything (it would share that one's data, or fail half-started)", async () => {
    // Prepare
    const ports = await freePorts();
    const other = createServer();
    await new Promise<void>((listening) => other.listen(ports.dynamodb, '127.0.0.1', () => listening()));

    // Act
    const started = startLocalStack({ ports, seedDemo: false });

    // Assess
    try {
      await expect(started).rejects.toBeInstanceOf(PortsTakenError);
      await expect(started).rejects.toThrow(`Port in use: ${ports.dynamodb} (dynamodb).`);
    } finally {
      other.close();
    }
  });
});

describe('port environment', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('spells ports as the environment an npm start reads them from', () => {
    // Prepare
    const env = portsEnv(PORTS);

    // Act
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);

    // Assess
    expect(env).toEqual({ PORT: '4100', SANDBOX_PORT: '4101', SES_PORT: '4102', DYNAMODB_PORT: '4103', SQS_PORT: '4104' });
    expect(portsFromEnv()).toEqual(PORTS);
  });
});
