import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { ROUTE_TIMEOUT_SECONDS, type RouteDef } from '#functions/routes';
import { badPercentEncoding } from '#shared/errors';

/** API Gateway (REST API, Lambda proxy) emulation: routes as it does (literal segments win over {params}) and sends its event shape. */

export const compileRoutes = (routes: readonly RouteDef[]) =>
  routes
    .map((route) => {
      const segments = route.path.split('/').filter(Boolean);
      return { route, segments, literals: segments.filter((segment) => !segment.startsWith('{')).length };
    })
    .sort((a, b) => b.literals - a.literals);

/** A path parameter that is not valid percent-encoding (`%E0%A4%A`): the server answers 400 naming it. */
export class MalformedPathParameterError extends Error {
  override name = 'MalformedPathParameterError';
}

/** A map keyed by untrusted names (headers, query keys): no prototype, so `__proto__` is a plain key. */
const untrustedMap = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

export const matchRoute = (compiled: ReturnType<typeof compileRoutes>, method: string, path: string) => {
  const parts = path.split('/').filter(Boolean);
  for (const candidate of compiled) {
    if (candidate.route.method !== method || candidate.segments.length !== parts.length) continue;
    const params = untrustedMap<string>();
    const matches = candidate.segments.every((segment, index) => {
      const part = parts[index] as string;
      if (segment.startsWith('{')) {
        const name = segment.slice(1, -1);
        try {
          params[name] = decodeURIComponent(part);
        } catch {
          throw new MalformedPathParameterError(badPercentEncoding(name));
        }
        return true;
      }
      return segment === part;
    });
    if (matches) return { route: candidate.route, params };
  }
  return undefined;
};

/** API Gateway's `requestContext.requestTime` format: `22/Nov/2026:09:30:00 +0000`. */
const requestTimeOf = (epoch: number) => {
  const [, day, month, year, time] = new Date(epoch).toUTCString().split(' '); // Sun, 22 Nov 2026 09:30:00 GMT
  return `${day}/${month}/${year}:${time} +0000`;
};

/** API Gateway's domainPrefix is the host's first label; a local address has none, so `localhost`. */
const domainPrefixOf = (host: string) => {
  const name = host.replace(/:\d+$/, '');
  return name === 'localhost' || /^[\d.]+$/.test(name) || name.startsWith('[') ? 'localhost' : (name.split('.')[0] ?? name);
};

/** Object.fromEntries defines own properties, so a key named `__proto__` stays a plain key. */
const singleValues = (multi: Record<string, string[]>) =>
  Object.fromEntries(Object.entries(multi).map(([name, values]) => [name, values[values.length - 1] as string]));

/** An ordinary object with the map's own keys, as in the JSON-parsed event Lambda hands a function. */
const plain = <T>(map: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(map));

/** Appends to a multi-value map without ever reading an inherited member (`constructor`, `__proto__`). */
const append = (map: Record<string, string[]>, name: string, value: string) => {
  const values = Object.hasOwn(map, name) ? map[name] : undefined;
  if (values) values.push(value);
  else map[name] = [value];
};

export type ProxyRequest = {
  route: Pick<RouteDef, 'id' | 'method' | 'path'>;
  /** The path as called (parameters filled in), without the stage. */
  path: string;
  /** Every header with all its values, in the casing the client sent. */
  headers: Record<string, string[]>;
  query?: Record<string, string[]>;
  pathParameters?: Record<string, string>;
  body: string | null;
  isBase64Encoded?: boolean;
  stage: string;
  sourceIp: string;
  /** requestContext.path: the path the client called; on a deployed API it starts with the stage. */
  contextPath?: string;
  apiId?: string;
  protocol?: string;
  requestId?: string;
  extendedRequestId?: string;
  epoch?: number;
};

/** The one place that shapes an API Gateway proxy event (server, sample events, unit tests); empty maps are null, as API Gateway sends them. */
export const proxyEvent = (request: ProxyRequest): APIGatewayProxyEvent => {
  const headers = singleValues(request.headers);
  const query = request.query && Object.keys(request.query).length > 0 ? request.query : undefined;
  const params = request.pathParameters && Object.keys(request.pathParameters).length > 0 ? request.pathParameters : undefined;
  const host = Object.entries(headers).find(([name]) => name.toLowerCase() === 'host')?.[1] ?? 'localhost';
  const userAgent = Object.entries(headers).find(([name]) => name.toLowerCase() === 'user-agent')?.[1] ?? null;
  const epoch = request.epoch ?? Date.now();
  return {
    resource: request.route.path,
    path: request.path,
    httpMethod: request.route.method,
    headers,
    multiValueHeaders: plain(request.headers),
    queryStringParameters: query ? singleValues(query) : null,
    multiValueQueryStringParameters: query ? plain(query) : null,
    pathParameters: params ? plain(params) : null,
    stageVariables: null,
    requestContext: {
      accountId: '000000000000',
      apiId: request.apiId ?? 'local',
      authorizer: undefined,
      domainName: host,
      domainPrefix: domainPrefixOf(host),
      extendedRequestId: request.extendedRequestId ?? randomUUID().replace(/-/g, '').slice(0, 16),
      httpMethod: request.route.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.sourceIp,
        user: null,
        userArn: null,
        userAgent,
      },
      path: request.contextPath ?? request.path,
      protocol: request.protocol ?? 'HTTP/1.1',
      requestId: request.requestId ?? randomUUID(),
      requestTime: requestTimeOf(epoch),
      requestTimeEpoch: epoch,
      resourceId: request.route.id,
      resourcePath: request.route.path,
      stage: request.stage,
    },
    body: request.body,
    isBase64Encoded: request.isBase64Encoded ?? false,
  };
};

/** The event for a request the local server received, with the headers API Gateway adds. */
export const buildEvent = (options: {
  request: IncomingMessage;
  url: URL;
  route: RouteDef;
  params: Record<string, string>;
  body: string;
  stage: string;
}): APIGatewayProxyEvent => {
  const { request, url } = options;
  const headers = untrustedMap<string[]>();
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    append(headers, request.rawHeaders[index] as string, request.rawHeaders[index + 1] as string);
  }
  const sourceIp = request.socket.remoteAddress ?? '127.0.0.1';
  headers['X-Forwarded-For'] = [sourceIp];
  headers['X-Forwarded-Port'] = [String(request.socket.localPort ?? '')];
  headers['X-Forwarded-Proto'] = ['http'];
  const query = untrustedMap<string[]>();
  for (const [name, value] of url.searchParams) append(query, name, value);
  return proxyEvent({
    route: options.route,
    path: url.pathname,
    headers,
    query,
    pathParameters: options.params,
    body: options.body === '' ? null : options.body,
    stage: options.stage,
    sourceIp,
    protocol: `HTTP/${request.httpVersion}`,
  });
};

/** A Lambda context like the one the runtime passes (enough for middy and Powertools). */
export const lambdaContext = (functionName: string, timeoutSeconds = ROUTE_TIMEOUT_SECONDS): Context => {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};
