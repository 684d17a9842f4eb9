import { createSocket, type Socket } from 'node:dgram';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { daemonAddress, traceAwsClient } from '#shared/tracing';

/**
 * The X-Ray subsegments of SDK calls (shared/tracing.ts), against a real UDP socket standing in for
 * the X-Ray daemon and a local HTTP server standing in for DynamoDB.
 */
const ROOT = '1-6791a2b3-0123456789abcdef01234567';
const PARENT = '53995c3f42cd8ad8';

let daemon: Socket;
let daemonPort: number;
const datagrams: string[] = [];
let nextDatagram: ((text: string) => void) | undefined;

let dynamo: Server;
let endpoint: string;
let answer: { status: number; body: unknown; headers?: Record<string, string> } = { status: 200, body: {} };
const requests: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (message) => {
    const text = message.toString();
    datagrams.push(text);
    nextDatagram?.(text);
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  daemonPort = daemon.address().port;
  dynamo = createServer((request, response) => {
    requests.push(request.headers);
    request.resume();
    request.on('end', () => {
      response.writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'REQ-1', ...answer.headers });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => dynamo.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}`;
});

afterAll(async () => {
  daemon.close();
  await new Promise((resolve) => dynamo.close(resolve));
});

afterEach(() => {
  vi.unstubAllEnvs();
  datagrams.length = 0;
  requests.length = 0;
  nextDatagram = undefined;
  answer = { status: 200, body: {} };
});

const client = () =>
  traceAwsClient(
    new DynamoDBClient({ endpoint, region: 'eu-west-1', maxAttempts: 1, credentials: { accessKeyId: 'unit', secretAccessKey: 'unit' } }),
  );

/** The subsegment document of the next datagram (header line, then the document). */
const nextSubsegment = () =>
  new Promise<Record<string, any>>((resolve) => {
    nextDatagram = (text) => {
      const [header, body] = text.split('\n');
      expect(JSON.parse(header!)).toEqual({ format: 'json', version: 1 });
      resolve(JSON.parse(body!));
    };
  });

const sampledInvocation = (sampled = '1') => {
  vi.stubEnv('_X_AMZN_TRACE_ID', `Root=${ROOT};Parent=${PARENT};Sampled=${sampled}`);
  vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', `127.0.0.1:${daemonPort}`);
  vi.stubEnv('AWS_REGION', 'eu-west-1');
};

describe('traceAwsClient', () => {
  it('sends one subsegment per call under the function segment and passes the trace on the request', async () => {
    // Prepare
    sampledInvocation();
    answer = { status: 200, body: { Item: { pk: { S: 'M#1' } } } };
    const received = nextSubsegment();

    // Act
    await client().send(new GetItemCommand({ TableName: 'affiliate-merchant-api-live', Key: { pk: { S: 'M#1' }, sk: { S: 'MERCHANT' } } }));
    const subsegment = await received;

    // Assess
    expect(subsegment).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
      trace_id: ROOT,
      parent_id: PARENT,
      type: 'subsegment',
      name: 'DynamoDB',
      namespace: 'aws',
      aws: { operation: 'GetItem', region: 'eu-west-1', request_id: 'REQ-1', retries: 0, table_name: 'affiliate-merchant-api-live' },
      http: { response: { status: 200 } },
    });
    expect(subsegment.end_time).toBeGreaterThanOrEqual(subsegment.start_time);
    expect(subsegment).not.toHaveProperty('fault');
    expect(requests[0]?.['x-amzn-trace-id']).toBe(`Root=${ROOT};Parent=${subsegment.id};Sampled=1`);
  });

  it('marks a refused call as an error with the exception name only, and still throws it', async () => {
    // Prepare
    sampledInvocation();
    answer = {
      status: 400,
      body: {
        __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
        message: 'The conditional request failed for alice@example.com',
      },
    };
    const received = nextSubsegment();

    // Act
    const call = client().send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }));

    // Assess
    await expect(call).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    const subsegment = await received;
    expect(subsegment).toMatchObject({
      error: true,
      http: { response: { status: 400 } },
      cause: { exceptions: [{ type: 'ConditionalCheckFailedException', remote: true }] },
    });
    expect(subsegment).not.toHaveProperty('fault');
    expect(JSON.stringify(subsegment)).not.toContain('alice@example.com');
  });

  it('marks a server failure as a fault and a throttled call as throttle', async () => {
    // Prepare
    sampledInvocation();
    answer = { status: 500, body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'boom' } };
    const faulted = nextSubsegment();

    // Act
    await client()
      .send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }))
      .catch(() => undefined);

    // Assess
    expect(await faulted).toMatchObject({ fault: true, http: { response: { status: 500 } } });

    // Prepare
    answer = { status: 400, body: { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'slow down' } };
    const throttled = nextSubsegment();

    // Act
    await client()
      .send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }))
      .catch(() => undefined);

    // Assess
    expect(await throttled).toMatchObject({ throttle: true, error: true });
  });

  it('does nothing for an invocation that is not sampled, or outside Lambda', async () => {
    // Prepare
    sampledInvocation('0');

    // Act
    await client().send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }));
    vi.unstubAllEnvs();
    vi.stubEnv('_X_AMZN_TRACE_ID', '');
    vi.stubEnv('AWS_XRAY_DAEMON_ADDRESS', '');
    await client().send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }));

    // Assess: no trace header went out, which is the same early return that skips the datagram.
    expect(requests).toHaveLength(2);
    for (const headers of requests) expect(headers['x-amzn-trace-id']).toBeUndefined();
  });
});

describe('daemonAddress', () => {
  it('reads both forms Lambda uses for AWS_XRAY_DAEMON_ADDRESS', () => {
    expect(daemonAddress('169.254.79.129:2000')).toEqual({ host: '169.254.79.129', port: 2000 });
    expect(daemonAddress('tcp:127.0.0.1:2000 udp:127.0.0.2:2001')).toEqual({ host: '127.0.0.2', port: 2001 });
    expect(daemonAddress(undefined)).toBeUndefined();
    expect(daemonAddress('')).toBeUndefined();
  });
});
