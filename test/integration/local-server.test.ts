import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { freePort } from '#local/ports';
import { stageEnvironment, startWorker } from '#local/stack';
import { MAX_BODY_BYTES, MESSAGES } from '#shared/errors';
import { api, orderBody, seedOne, stack, TRACE_ID } from './helpers';

/**
 * The local API Gateway emulation answers every request, however malformed, in an envelope (what
 * the stage's gateway responses and WebACL answer in AWS in the V2 one), and no request brings a
 * stage's server down.
 */

const portOf = (stage: 'live' | 'sandbox') => Number(new URL(stack.stages[stage].url).port);

/** Sends raw bytes and returns everything the server answers until it closes (or `idleMs` of silence). */
const rawRequest = (stage: 'live' | 'sandbox', bytes: string, options: { hangUpAfterWrite?: boolean } = {}) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(portOf(stage), '127.0.0.1', () => {
      socket.write(bytes);
      if (options.hangUpAfterWrite) socket.destroy();
    });
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('close', () => resolve(received));
    socket.on('error', (error) => (options.hangUpAfterWrite ? resolve(received) : reject(error)));
    socket.setTimeout(5000, () => socket.destroy());
  });

const parseRaw = (raw: string) => {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(
    headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
};

const expectV2Error = (body: any, message?: string) => {
  expect(body).toMatchObject({ success: false, data: null, errors: { message: [expect.any(String)] } });
  expect(body.meta.trace_id).toMatch(TRACE_ID);
  if (message) expect(body.errors.message[0]).toBe(message);
};

const stillServes = async (stage: 'live' | 'sandbox') => {
  const response = await api(stage).get('/api/v2/tiers');
  expect(response.status).toBe(401);
  expectV2Error(response.body, 'Unauthenticated.');
};

describe('local API server under malformed requests', () => {
  it('answers a malformed percent-escape in a path id with 400 naming the parameter, and keeps serving', async () => {
    const response = await api('sandbox').get('/api/v2/orders/%E0%A4%A');

    expect(response.status).toBe(400);
    expectV2Error(response.body, 'The uuid path parameter is not valid percent-encoding.');
    await stillServes('sandbox');
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty'])('serves a query key named %s like any other key', async (key) => {
    const merchant = await seedOne(undefined, 'sandbox');

    const response = await api('sandbox', merchant.tokens.test).get(`/api/v2/tiers?${key}=1&${key}=2`);

    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    await stillServes('sandbox');
  });

  it.each(['__proto__', 'constructor', 'toString'])('serves a header named %s like any other header', async (name) => {
    const merchant = await seedOne(undefined, 'sandbox');

    const raw = await rawRequest(
      'sandbox',
      `GET /api/v2/tiers HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${merchant.tokens.test}\r\n${name}: x\r\n${name}: y\r\nConnection: close\r\n\r\n`,
    );

    expect(parseRaw(raw).status).toBe(200);
    await stillServes('sandbox');
  });

  it('ignores an invalid Host header', async () => {
    const raw = await rawRequest('live', 'GET /api/v2/tiers HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n');

    const response = parseRaw(raw);
    expect(response.status).toBe(401);
    expectV2Error(response.body, 'Unauthenticated.');
    await stillServes('live');
  });

  it('survives a client that hangs up in the middle of the body', async () => {
    await rawRequest(
      'live',
      'POST /api/v2/orders/create HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
      { hangUpAfterWrite: true },
    );
    await rawRequest('live', 'POST /api/orders/create HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n{', {
      hangUpAfterWrite: true,
    });

    await stillServes('live');
  });

  it('answers broken framing with 400 in the V2 envelope', async () => {
    const raw = await rawRequest('live', 'GET /api/v2/tiers HTTP/1.1\r\nHost: localhost\r\nThis is not a header\r\n\r\n');

    const response = parseRaw(raw);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/json');
    expectV2Error(response.body, 'Bad Request');
    await stillServes('live');
  });

  it('answers broken framing on the legacy route with 400 in the legacy envelope', async () => {
    const raw = await rawRequest(
      'live',
      'POST /api/orders/create HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}',
    );

    const response = parseRaw(raw);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, message: 'Bad Request', data: [] });
    await stillServes('live');
  });

  it('answers oversized headers with 431 in the V2 envelope', async () => {
    const raw = await rawRequest('live', `GET /api/v2/tiers HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);

    const response = parseRaw(raw);
    expect(response.status).toBe(431);
    expectV2Error(response.body, 'Request Header Fields Too Large');
    await stillServes('live');
  });

  it('answers a body of MAX_BODY_BYTES or more with 413 in the V2 envelope, on the legacy route too, sent whole or chunked', async () => {
    const body = `{"order_no":"${'a'.repeat(MAX_BODY_BYTES - 15)}"}`;
    const url = `${stack.stages.live.url}/api/orders/create`;
    const whole = await fetch(url, { method: 'POST', body });
    const chunked = await fetch(url, { method: 'POST', body: new Blob([body]).stream(), duplex: 'half' } as RequestInit);

    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
    expect([whole.status, chunked.status]).toEqual([413, 413]);
    expectV2Error(await whole.json(), MESSAGES.bodyTooLarge);
    expectV2Error(await chunked.json(), MESSAGES.bodyTooLarge);
  });

  it('takes the largest valid order as a client may send it, every non-ASCII character escaped and indented, well under MAX_BODY_BYTES', async () => {
    const merchant = await seedOne();
    const text = 'é'.repeat(255);
    const row = {
      product_sku: text,
      product_name: text,
      segment_slug: text,
      price_value: 10_000_000_000,
      tax_value: 10_000_000_000,
      quantity: 1000,
    };
    const order = orderBody({ order_no: text, customer: { name: text, email: 'dan@example.com' }, order_rows: Array(200).fill(row) });
    const body = JSON.stringify(order, null, 8).replace(
      /[\u0080-\uffff]/g,
      (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );

    const response = await api('live', merchant.tokens.live).raw('POST', '/api/v2/orders/create', body);

    expect(Buffer.byteLength(body)).toBeGreaterThan(900_000);
    expect(response.status).toBe(201);
  });

  it('takes a body one byte under MAX_BODY_BYTES as any other (without a token: 401)', async () => {
    const body = `{"order_no":"${'a'.repeat(MAX_BODY_BYTES - 16)}"}`;
    const response = await api('live').raw('POST', '/api/v2/orders/create', body);

    expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES - 1);
    expect(response.status).toBe(401);
  });

  it('answers an unknown path, and a wrong method on the legacy route, with 404 in the V2 envelope, as the gateway response does in AWS', async () => {
    const v2 = await api('live').get('/api/v2/nothing-here');
    const legacy = await api('live').get('/api/orders/create');

    expect([v2.status, legacy.status]).toEqual([404, 404]);
    expectV2Error(v2.body, 'Not Found');
    expectV2Error(legacy.body, 'Not Found');
  });
});

/** An address of this machine other than loopback, if it has one. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;

const connects = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

describe('local emulators', () => {
  it.skipIf(!externalAddress).each(['dynamodb', 'sqs', 'ses'] as const)(
    'the %s emulator listens on the loopback interface only',
    async (name) => {
      const port = Number(new URL(stack.endpoints[name]).port);

      const fromLoopback = await connects('127.0.0.1', port);
      const fromOutside = await connects(externalAddress as string, port);

      expect(fromLoopback).toBe(true);
      expect(fromOutside).toBe(false);
    },
  );
});

describe('local per-merchant rate limit', () => {
  it('answers 429 with Retry-After in the V2 envelope on every route once a token used its 5-minute budget, in any spelling, and only for that token', async () => {
    const busy = await seedOne();
    const quiet = await seedOne();
    const port = await freePort();
    const info = stack.stages.live;
    const worker = await startWorker('live', port, {
      ...stageEnvironment('live', info, stack.endpoints),
      RATE_LIMIT_PER_5_MIN: '3',
      CONSUMER_POLL: 'off',
      STREAM_POLL: 'off',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
    });
    const get = (path: string, token: string) =>
      fetch(`http://127.0.0.1:${port}${path}`, { headers: { Authorization: `Bearer ${token}` } });
    try {
      const allowed = [];
      for (let index = 0; index < 3; index += 1) allowed.push((await get('/api/v2/tiers', busy.tokens.live!)).status);

      const throttled = await get('/api/v2/tiers', busy.tokens.live!);
      const throttledLegacy = await fetch(`http://127.0.0.1:${port}/api/orders/create`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${busy.tokens.live!}` },
        body: '{}',
      });
      // Another spelling of the same credential (authentication takes it) shares the spent budget.
      const respelled = await fetch(`http://127.0.0.1:${port}/api/v2/tiers`, {
        headers: { Authorization: `bearer   ${busy.tokens.live!}` },
      });
      const other = await get('/api/v2/tiers', quiet.tokens.live!);

      expect(allowed).toEqual([200, 200, 200]);
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
      expectV2Error(await throttled.json(), 'Too Many Attempts.');
      // The WebACL answers every path with its one custom body, the V2 envelope.
      expect(throttledLegacy.status).toBe(429);
      expectV2Error(await throttledLegacy.json(), 'Too Many Attempts.');
      expect(respelled.status).toBe(429);
      expect(other.status).toBe(200);
    } finally {
      worker.kill('SIGTERM');
    }
  });
});
