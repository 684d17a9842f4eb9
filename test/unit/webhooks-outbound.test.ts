import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { addressRefusal, checkedLookup, postWebhook, type Resolve, targetPolicyFromEnv, urlRefusal } from '#shared/webhooks/outbound';

/**
 * The SSRF guard for outbound webhooks: address classes, URL rules, the connect-time lookup that
 * defeats DNS rebinding, and real POSTs against local servers (timeouts, redirects, huge bodies).
 */
const DEPLOYED = { allowLocal: false };
const LOCAL = { allowLocal: true };

const servers: http.Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

type Handler = (request: http.IncomingMessage, response: http.ServerResponse, body: string) => void;

/** Starts a server on 127.0.0.1 that records every request it receives. */
async function startServer(handler: Handler) {
  const requests: Array<{ method?: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: request.method, headers: request.headers, body });
      handler(request, response, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, port, requests, server };
}

const lookupOnce = (lookup: ReturnType<typeof checkedLookup>, all: boolean) =>
  new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
    lookup('merchant.example', { all }, (error, address, family) => resolve({ error, address, family })),
  );

describe('targetPolicyFromEnv', () => {
  it('allows local targets only when WEBHOOKS_ALLOW_LOCAL_TARGETS is exactly "true"', () => {
    // Act
    const policies = [{ WEBHOOKS_ALLOW_LOCAL_TARGETS: 'true' }, { WEBHOOKS_ALLOW_LOCAL_TARGETS: '1' }, {}].map(targetPolicyFromEnv);

    // Assess
    expect(policies).toEqual([LOCAL, DEPLOYED, DEPLOYED]);
  });
});

describe('addressRefusal', () => {
  it.each([
    ['this network', '0.0.0.0'],
    ['private 10/8', '10.1.2.3'],
    ['carrier-grade NAT', '100.64.0.1'],
    ['loopback', '127.0.0.1'],
    ['link-local', '169.254.1.1'],
    ['private 172.16/12', '172.31.255.255'],
    ['IETF protocol assignments', '192.0.0.8'],
    ['documentation 192.0.2/24', '192.0.2.10'],
    ['private 192.168/16', '192.168.1.1'],
    ['benchmarking', '198.19.0.1'],
    ['documentation 198.51.100/24', '198.51.100.7'],
    ['documentation 203.0.113/24', '203.0.113.9'],
    ['multicast', '224.0.0.1'],
    ['reserved 240/4', '240.0.0.1'],
    ['broadcast', '255.255.255.255'],
    ['IPv6 unspecified', '::'],
    ['IPv6 loopback', '::1'],
    ['IPv6 unique-local', 'fd12::1'],
    ['IPv6 link-local', 'fe80::1'],
    ['IPv6 multicast', 'ff02::1'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped public', '::ffff:8.8.8.8'],
    ['NAT64', '64:ff9b::808:808'],
    ['NAT64 form of the metadata address', '64:ff9b::a9fe:a9fe'],
    ['local-use NAT64 (RFC 8215) form of the metadata address', '64:ff9b:1::a9fe:a9fe'],
    ['6to4 form of the metadata address', '2002:a9fe:a9fe::1'],
    ['6to4 form of a private address', '2002:a00:1::1'],
    ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['IPv6 documentation', '2001:db8::1'],
    ['EC2 IPv6 metadata', 'fd00:ec2::254'],
    ['not an IP at all', 'example.com'],
  ])('refuses %s (%s) on a deployed stage', (_name, address) => {
    // Act
    const refusal = addressRefusal(address, DEPLOYED);

    // Assess
    expect(refusal).toEqual(expect.any(String));
  });

  it('names the instance metadata address in its own words', () => {
    // Act
    const refusal = addressRefusal('169.254.169.254', DEPLOYED);

    // Assess
    expect(refusal).toMatch(/instance metadata/);
  });

  it('says a single reserved address is that address, and any other is in its range', () => {
    // Act
    const refusals = ['::', '255.255.255.255', '10.1.2.3', '[fe80::1]'].map((address) => addressRefusal(address, DEPLOYED));

    // Assess
    expect(refusals).toEqual([
      'Webhook target :: is the unspecified address and cannot be reached.',
      'Webhook target 255.255.255.255 is the broadcast address and cannot be reached.',
      'Webhook target 10.1.2.3 is in a private range and cannot be reached.',
      'Webhook target [fe80::1] is in the link-local range and cannot be reached.',
    ]);
  });

  it.each(['8.8.8.8', '2606:4700::1111', '1.1.1.1'])('allows the public address %s', (address) => {
    // Act
    const refusal = addressRefusal(address, DEPLOYED);

    // Assess
    expect(refusal).toBeUndefined();
  });

  it('allows loopback only when local targets are allowed, and still refuses private ranges then', () => {
    // Act
    const local = ['127.0.0.1', '127.8.9.10', '::1', '10.0.0.1', '::ffff:127.0.0.1'].map((address) => addressRefusal(address, LOCAL));

    // Assess
    expect(local.slice(0, 3)).toEqual([undefined, undefined, undefined]);
    expect(local[3]).toEqual(expect.any(String));
    expect(local[4]).toEqual(expect.any(String));
  });
});

describe('urlRefusal', () => {
  it.each([
    ['plain http on a deployed stage', 'http://merchant.example/hook', DEPLOYED],
    ['https to a literal private IP', 'https://10.0.0.1/hook', DEPLOYED],
    ['https to a literal metadata IP written in hex', 'https://0xa9fea9fe/latest', DEPLOYED],
    ['https to a literal IPv4-mapped IPv6', 'https://[::ffff:127.0.0.1]/hook', DEPLOYED],
    ['credentials in the URL', 'https://user:secret@merchant.example/hook', DEPLOYED],
    ['a URL that does not parse', 'not a url', DEPLOYED],
    ['another scheme', 'ftp://merchant.example/hook', LOCAL],
    ['plain http to a non-loopback host locally', 'http://example.com/hook', LOCAL],
    ['a URL longer than 2048 characters', `https://merchant.example/${'a'.repeat(2048)}`, DEPLOYED],
    ['localhost by name on a deployed stage', 'https://localhost/hook', DEPLOYED],
    ['a subdomain of localhost on a deployed stage', 'https://api.localhost/hook', DEPLOYED],
    ['localhost spelled with the root dot on a deployed stage', 'https://localhost./hook', DEPLOYED],
    ['a subdomain of localhost spelled with the root dot on a deployed stage', 'https://api.localhost./hook', DEPLOYED],
  ])('refuses %s', (_name, url, policy) => {
    // Act
    const refusal = urlRefusal(url, policy);

    // Assess
    expect(refusal).toEqual(expect.any(String));
  });

  it.each([
    ['CR LF', 'https://merchant.example/hook\r\nX-Injected: 1'],
    ['TAB', 'https://merchant.example/ho\tok'],
    ['NUL', 'https://merchant.example/hook\u0000'],
    ['another C0 control', 'https://merchant.example/\u001bhook'],
    ['DEL', 'https://merchant.example/hook\u007f'],
    ['a C1 control', 'https://merchant.example/hook\u0085'],
  ])('refuses a control character (%s) anywhere, even where the URL parser would drop it', (_name, url) => {
    // Act
    const refusals = [urlRefusal(url, DEPLOYED), urlRefusal(url, LOCAL)];

    // Assess
    expect(refusals).toEqual([
      'The webhook URL must not contain control characters.',
      'The webhook URL must not contain control characters.',
    ]);
  });

  it.each(['https://merchant.example:0/hook', 'https://merchant.example:00/hook', 'http://127.0.0.1:0/hook'])(
    'refuses port 0 (%s), which would be dialed as the default port',
    (url) => {
      // Act
      const refusal = urlRefusal(url, LOCAL);

      // Assess
      expect(refusal).toBe('The webhook URL must not use port 0.');
    },
  );

  it.each([
    ['private', 'https://192.168.1.10/hook'],
    ['link-local', 'https://169.254.1.1/hook'],
    ['carrier-grade NAT', 'https://100.64.0.1/hook'],
    ['metadata', 'https://169.254.169.254/latest/meta-data'],
    ['metadata, trailing dot', 'https://169.254.169.254./latest'],
    ['metadata in decimal', 'https://2852039166/latest'],
    ['unique-local', 'https://[fd12:3456::1]/hook'],
    ['IPv6 link-local', 'https://[fe80::1]/hook'],
    ['IPv4-mapped metadata', 'https://[::ffff:169.254.169.254]/latest'],
    ['NAT64 metadata', 'https://[64:ff9b::169.254.169.254]/latest'],
    ['local-use NAT64 metadata', 'https://[64:ff9b:1::a9fe:a9fe]/latest'],
    ['6to4 metadata', 'https://[2002:a9fe:a9fe::]/latest'],
    ['EC2 IPv6 metadata', 'https://[fd00:ec2::254]/latest'],
  ])('refuses a literal %s address on both a deployed stage and npm start', (_name, url) => {
    // Act
    const refusals = [urlRefusal(url, DEPLOYED), urlRefusal(url, LOCAL)];

    // Assess
    expect(refusals).toEqual([expect.stringMatching(/cannot be reached/), expect.stringMatching(/cannot be reached/)]);
  });

  it.each([
    ['an empty label', 'https://shop..example/hook', 'shop..example'],
    ['a label starting with a hyphen', 'https://-shop.example/hook', '-shop.example'],
    ['a label ending with a hyphen', 'https://shop-.example/hook', 'shop-.example'],
    ['a character no host name has', 'https://shop$.example/hook', 'shop$.example'],
    ['a label of 64 characters', `https://${'a'.repeat(64)}.example/hook`, `${'a'.repeat(64)}.example`],
  ])('refuses a host that is no host name (%s), which the URL parser takes but DNS never resolves', (_name, url, host) => {
    // Act
    const refusal = urlRefusal(url, DEPLOYED);

    // Assess
    expect(refusal).toBe(`The webhook URL's host ${host} is not a valid host name.`);
  });

  it.each([
    ['https to a public host on a deployed stage', 'https://merchant.example/hook', DEPLOYED],
    ['a host name with the root dot', 'https://merchant.example./hook', DEPLOYED],
    ['an international host name (punycoded by the parser)', 'https://bücher.example/hook', DEPLOYED],
    ['a label with an underscore and one of 63 characters', `https://_hooks.${'a'.repeat(63)}.example/hook`, DEPLOYED],
    ['https to a public address on a deployed stage', 'https://8.8.8.8/hook', DEPLOYED],
    ['https to a public IPv6 address on a deployed stage', 'https://[2606:4700::1111]/hook', DEPLOYED],
    ['https with an explicit port', 'https://merchant.example:8443/hook', DEPLOYED],
    ['plain http to 127.0.0.1 locally', 'http://127.0.0.1:8080/hook', LOCAL],
    ['plain http to localhost locally', 'http://localhost:8080/hook', LOCAL],
    ['plain http to [::1] locally', 'http://[::1]:8080/hook', LOCAL],
    ['https to 127.0.0.1 locally', 'https://127.0.0.1:8443/hook', LOCAL],
  ])('allows %s', (_name, url, policy) => {
    // Act
    const refusal = urlRefusal(url, policy);

    // Assess
    expect(refusal).toBeUndefined();
  });
});

describe('checkedLookup', () => {
  it('refuses a hostname when any of its addresses is private, so DNS rebinding cannot pass', async () => {
    // Prepare
    const resolve: Resolve = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];

    // Act
    const { error } = await lookupOnce(checkedLookup(DEPLOYED, resolve), false);

    // Assess
    expect(error?.code).toBe('EADDRREFUSED_POLICY');
    expect(error?.message).toContain('10.0.0.5');
  });

  it('answers with the first address, or the whole list when all addresses are asked for', async () => {
    // Prepare
    const resolve: Resolve = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ];
    const lookup = checkedLookup(DEPLOYED, resolve);

    // Act
    const single = await lookupOnce(lookup, false);
    const all = await lookupOnce(lookup, true);

    // Assess
    expect(single).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect(all.error).toBeNull();
    expect(all.address).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
  });
});

describe('postWebhook', () => {
  const options = { timeoutMs: 2_000, policy: LOCAL };

  it('returns the status and body of a 2xx answer and sends the JSON body with its headers', async () => {
    // Prepare
    const target = await startServer((_request, response) => response.writeHead(202).end('{"ok":true}'));

    // Act
    const result = await postWebhook(target.url, { 'x-signature': 'sig' }, '{"event":"order.accepted"}', options);

    // Assess
    expect(result).toEqual({ status: 202, body: '{"ok":true}', latencyMs: expect.any(Number) });
    expect(target.requests).toHaveLength(1);
    expect(target.requests[0]).toMatchObject({
      method: 'POST',
      body: '{"event":"order.accepted"}',
      headers: {
        'content-type': 'application/json',
        'content-length': '26',
        'user-agent': 'affiliate-merchant-api-webhooks/1',
        'x-signature': 'sig',
      },
    });
  });

  it('gives up with a timeout error when the server never answers', async () => {
    // Prepare
    const target = await startServer(() => {});

    // Act
    const started = Date.now();
    const result = await postWebhook(target.url, {}, '{}', { ...options, timeoutMs: 300 });

    // Assess
    expect(result.error).toMatch(/timed out after 300 ms/);
    expect(result.status).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('does not follow a redirect: the 302 is returned and the Location target receives nothing', async () => {
    // Prepare
    const elsewhere = await startServer((_request, response) => response.writeHead(200).end('followed'));
    const target = await startServer((_request, response) => response.writeHead(302, { location: elsewhere.url }).end());

    // Act
    const result = await postWebhook(target.url, {}, '{}', options);

    // Assess
    expect(result.status).toBe(302);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('stops reading a huge answer and keeps only the start of it', async () => {
    // Prepare
    const target = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(64 * 1024);
      for (let sent = 0; sent < 1024 * 1024; sent += chunk.length) response.write(chunk);
      response.end();
    });

    // Act
    const result = await postWebhook(target.url, {}, '{}', options);

    // Assess
    expect(result.status).toBe(200);
    expect(result.body.length).toBeLessThanOrEqual(1024);
    expect(result.body).toMatch(/^x+$/);
  });

  it('keeps whole characters of the answer: the excerpt never ends in half of one outside the BMP', async () => {
    // Prepare: the 1,024th UTF-16 unit of the answer is the first half of an emoji.
    const target = await startServer((_request, response) => response.writeHead(200).end(`${'a'.repeat(1023)}😀 and more`));

    // Act
    const result = await postWebhook(target.url, {}, '{}', options);

    // Assess
    expect(result.body).toBe('a'.repeat(1023));
    expect(result.body.isWellFormed()).toBe(true);
  });

  it('keeps no more of the answer than maxBodyBytes', async () => {
    // Prepare
    const target = await startServer((_request, response) => response.writeHead(500).end('y'.repeat(5_000)));

    // Act
    const result = await postWebhook(target.url, {}, '{}', { ...options, maxBodyBytes: 100 });

    // Assess
    expect(result.status).toBe(500);
    expect(result.body).toBe('y'.repeat(100));
  });

  it('passes the Retry-After header through', async () => {
    // Prepare
    const target = await startServer((_request, response) => response.writeHead(503, { 'retry-after': '120' }).end());

    // Act
    const result = await postWebhook(target.url, {}, '{}', options);

    // Assess
    expect(result).toMatchObject({ status: 503, retryAfter: '120' });
  });

  it('refuses a hostname that resolves to a private address, without a status and without throwing', async () => {
    // Prepare
    const resolve: Resolve = async () => [{ address: '10.0.0.5', family: 4 }];

    // Act
    const result = await postWebhook('https://rebinding.example/hook', {}, '{}', { ...options, resolve });

    // Assess
    expect(result.status).toBeUndefined();
    expect(result.error).toContain('10.0.0.5');
  });

  it('refuses plain http to loopback on a deployed stage without connecting', async () => {
    // Prepare
    const target = await startServer((_request, response) => response.writeHead(200).end());
    let connections = 0;
    target.server.on('connection', () => connections++);

    // Act
    const result = await postWebhook(`http://127.0.0.1:${target.port}/hook`, {}, '{}', { ...options, policy: DEPLOYED });

    // Assess
    expect(result.status).toBeUndefined();
    expect(result.error).toEqual(expect.any(String));
    expect(target.requests).toHaveLength(0);
    expect(connections).toBe(0);
  });

  it('never throws on a URL that does not parse', async () => {
    // Act
    const result = await postWebhook('::not a url::', {}, '{}', options);

    // Assess
    expect(result.status).toBeUndefined();
    expect(result.error).toEqual(expect.any(String));
  });
});
