import { promises as dns } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { responseExcerpt } from '#shared/db/entities/webhook-delivery';

/** Which webhook targets are allowed: deployed stages only reach the public internet over https, local runs may also reach loopback. */
export type TargetPolicy = { allowLocal: boolean };

/** Only an explicit opt-in in the environment lets webhooks reach loopback. */
export const targetPolicyFromEnv = (env = process.env): TargetPolicy => ({ allowLocal: env.WEBHOOKS_ALLOW_LOCAL_TARGETS === 'true' });

export const MAX_URL_LENGTH = 2048;
const LOCAL_HTTP_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const USER_AGENT = 'affiliate-merchant-api-webhooks/1';

type Rule = [address: string, prefix: number, reason: string];

// Order matters: the first matching rule names the reason, so the specific ranges come before the wide ones.
const IPV4_RULES: Rule[] = [
  ['169.254.169.254', 32, 'the cloud instance metadata address'],
  ['255.255.255.255', 32, 'the broadcast address'],
  ['0.0.0.0', 8, 'the "this network" range'],
  ['10.0.0.0', 8, 'a private range'],
  ['100.64.0.0', 10, 'the carrier-grade NAT range'],
  ['127.0.0.0', 8, 'the loopback range'],
  ['169.254.0.0', 16, 'the link-local range'],
  ['172.16.0.0', 12, 'a private range'],
  ['192.0.0.0', 24, 'the IETF protocol assignments range'],
  ['192.0.2.0', 24, 'a documentation range'],
  ['192.168.0.0', 16, 'a private range'],
  ['198.18.0.0', 15, 'the benchmarking range'],
  ['198.51.100.0', 24, 'a documentation range'],
  ['203.0.113.0', 24, 'a documentation range'],
  ['224.0.0.0', 4, 'the multicast range'],
  ['240.0.0.0', 4, 'the reserved range'],
];
const IPV6_RULES: Rule[] = [
  ['fd00:ec2::254', 128, 'the cloud instance metadata address'],
  ['::', 128, 'the unspecified address'],
  ['::1', 128, 'the loopback address'],
  ['::', 96, 'the deprecated IPv4-compatible range'],
  ['::ffff:0:0', 96, 'the IPv4-mapped range'],
  ['64:ff9b::', 96, 'the NAT64 range'],
  ['64:ff9b:1::', 48, 'the local-use NAT64 range'],
  ['2001::', 32, 'the Teredo range'],
  ['2002::', 16, 'the 6to4 range'],
  ['2001:db8::', 32, 'a documentation range'],
  ['fc00::', 7, 'the unique-local range'],
  ['fe80::', 10, 'the link-local range'],
  ['ff00::', 8, 'the multicast range'],
];

// One BlockList per rule and family: node matches IPv4 rules against IPv4-mapped IPv6 addresses (and back), so families stay apart.
const compile = (rules: Rule[], family: 'ipv4' | 'ipv6') =>
  rules.map(([address, prefix, reason]) => {
    const list = new net.BlockList();
    list.addSubnet(address, prefix, family);
    // One address is that address; a wider rule is a range the address is in.
    return { list, reason: prefix === (family === 'ipv4' ? 32 : 128) ? reason : `in ${reason}` };
  });
const BLOCKED = { ipv4: compile(IPV4_RULES, 'ipv4'), ipv6: compile(IPV6_RULES, 'ipv6') };
const LOOPBACK = { ipv4: compile([['127.0.0.0', 8, '']], 'ipv4'), ipv6: compile([['::1', 128, '']], 'ipv6') };

/** Says why an IP address must not be reached (private, loopback, metadata, reserved…), or undefined when it is a public address. */
export function addressRefusal(address: string, policy: TargetPolicy): string | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const version = net.isIP(bare);
  if (version === 0) return `"${address}" is not a valid IP address.`;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (policy.allowLocal && LOOPBACK[family].some(({ list }) => list.check(bare, family))) return undefined;
  const hit = BLOCKED[family].find(({ list }) => list.check(bare, family));
  if (!hit) return undefined;
  return `Webhook target ${address} is ${hit.reason} and cannot be reached.`;
}

// C0 controls, DEL and the C1 controls: the URL parser drops some and encodes others, so what is stored would not be what is dialed.
const hasControlCharacter = (text: string) =>
  [...text].some((char) => {
    const code = char.codePointAt(0) ?? 0;
    return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
  });

/** A host name without the root's dot it may end in (`localhost.` is `localhost`). */
const withoutRootDot = (host: string) => (host.endsWith('.') ? host.slice(0, -1) : host);

/** `localhost` and its subdomains always name the loopback address (RFC 6761). */
const isLocalhostName = (host: string) => {
  const name = withoutRootDot(host);
  return name === 'localhost' || name.endsWith('.localhost');
};

/** Says why a webhook URL must not be called, or undefined: the API refuses it when written (422 on `url`), a delivery again. */
export function urlRefusal(url: string, policy: TargetPolicy): string | undefined {
  if (url.length > MAX_URL_LENGTH) return `The webhook URL is longer than ${MAX_URL_LENGTH} characters.`;
  if (hasControlCharacter(url)) return 'The webhook URL must not contain control characters.';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'The webhook URL is not a valid URL.';
  }
  if (parsed.username || parsed.password) return 'The webhook URL must not contain a username or password.';
  const host = parsed.hostname;
  if (parsed.protocol === 'http:') {
    if (!policy.allowLocal) return 'The webhook URL must use https.';
    if (!LOCAL_HTTP_HOSTS.has(host))
      return 'The webhook URL must use https (plain http is only allowed for localhost when running locally).';
  } else if (parsed.protocol !== 'https:') {
    return 'The webhook URL must use https.';
  }
  // The URL parser keeps port 0, which the socket layer dials as the scheme's default port.
  if (parsed.port === '0') return 'The webhook URL must not use port 0.';
  // Node dials a literal address without `lookup`, so it is checked here (the parser has canonicalized every spelling of it).
  if (net.isIP(host.replace(/^\[(.*)\]$/, '$1'))) return addressRefusal(host, policy);
  if (!isHostName(host)) return `The webhook URL's host ${host} is not a valid host name.`;
  if (!policy.allowLocal && isLocalhostName(host)) return `Webhook target ${host} is the loopback address and cannot be reached.`;
  return undefined;
}

/** A DNS label as host names use it (RFC 1123; `_` too, which some service names carry): 1 to 63 characters, no hyphen at either end. */
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** Whether a parsed (lowercased, punycoded) host can be a name DNS resolves: labels as above, at most 253 characters. */
const isHostName = (host: string) => {
  const name = withoutRootDot(host);
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
};

/** Resolves a hostname to every address it has; tests inject their DNS answers (rebinding included). */
export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const defaultResolve: Resolve = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** A `net.LookupFunction` refusing the connection when any resolved address is refused: checked at connect time, against DNS rebinding. */
export function checkedLookup(policy: TargetPolicy, resolve: Resolve = defaultResolve): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (resolved) => {
        for (const { address } of resolved) {
          const refusal = addressRefusal(address, policy);
          if (refusal) return callback(Object.assign(new Error(refusal), { code: 'EADDRREFUSED_POLICY' }), '', 0);
        }
        const wanted =
          options.family === 4 || options.family === 6 ? resolved.filter((entry) => entry.family === options.family) : resolved;
        const first = wanted[0];
        if (!first) return callback(Object.assign(new Error(`No address found for ${hostname}.`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return callback(null, wanted);
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/** What a webhook delivery attempt got back; `error` is set when no HTTP answer was received (refused, network, timeout). */
export interface PostResult {
  status?: number;
  latencyMs: number;
  body: string;
  retryAfter?: string;
  error?: string;
}

/** POSTs a webhook body to a merchant URL, SSRF-safe (checked before and after DNS, no redirects, bounded time and body); never throws. */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; policy: TargetPolicy; resolve?: Resolve; maxBodyBytes?: number },
): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refusal = urlRefusal(url, options.policy);
  if (refusal) return { latencyMs: elapsed(), body: '', error: refusal };
  const maxBodyBytes = options.maxBodyBytes ?? 65_536;
  const target = new URL(url);
  const requestHeaders = {
    ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': USER_AGENT,
  };

  return new Promise<PostResult>((resolve) => {
    let settled = false;
    let status: number | undefined;
    let retryAfter: string | undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    let request: http.ClientRequest | undefined;
    const timer = setTimeout(() => {
      settle(`timed out after ${options.timeoutMs} ms`);
      request?.destroy();
    }, options.timeoutMs);
    const settle = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        latencyMs: elapsed(),
        body: responseExcerpt(Buffer.concat(chunks).toString('utf8')),
        ...(status !== undefined && { status }),
        ...(retryAfter !== undefined && { retryAfter }),
        ...(error !== undefined && { error }),
      });
    };
    try {
      request = (target.protocol === 'https:' ? https : http).request(
        target,
        { method: 'POST', agent: false, lookup: checkedLookup(options.policy, options.resolve), headers: requestHeaders },
        (response) => {
          status = response.statusCode;
          const header = response.headers['retry-after'];
          if (header !== undefined) retryAfter = Array.isArray(header) ? header.join(', ') : header;
          response.on('data', (chunk: Buffer) => {
            if (settled) return;
            const room = maxBodyBytes - received;
            chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
            received += Math.min(chunk.length, room);
            if (received >= maxBodyBytes) {
              settle();
              response.destroy();
            }
          });
          response.on('end', () => settle());
          response.on('error', (error) => settle(error.message));
          response.on('close', () => settle(response.complete ? undefined : 'the connection closed before the answer was complete'));
        },
      );
      request.on('error', (error) => settle(error.message));
      request.end(body);
    } catch (error) {
      settle(error instanceof Error ? error.message : String(error));
    }
  });
}
