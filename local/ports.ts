import { createServer } from 'node:net';

/** The local stack's ports: defaults, overridable by env (README). */
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
