import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freePorts, PortsTakenError, removePortsFile, runningStackPorts, writePortsFile } from '#local/ports';
import { startLocalStack } from '#local/stack';

/** `npm start` records its ports so that `npm run invoke` finds it without the port env. */

const PORTS = { live: 4100, sandbox: 4101, ses: 4102, dynamodb: 4103, sqs: 4104 };
const tempFile = () => join(mkdtempSync(join(tmpdir(), 'ports-')), 'ports.json');

describe('recorded local ports', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('finds the ports a running stack recorded', () => {
    const file = tempFile();
    writePortsFile(PORTS, file);

    const ports = runningStackPorts(file);

    expect(ports).toEqual({ ...PORTS, recorded: true });
  });

  it('lets the port env override a recorded port', () => {
    const file = tempFile();
    writePortsFile(PORTS, file);
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

  it("removes its own file at exit and leaves another process's file alone", () => {
    const own = tempFile();
    const other = tempFile();
    writePortsFile(PORTS, own);
    writeFileSync(other, JSON.stringify({ pid: process.pid + 1, ports: PORTS }));

    removePortsFile(own);
    removePortsFile(other);

    expect(existsSync(own)).toBe(false);
    expect(existsSync(other)).toBe(true);
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
