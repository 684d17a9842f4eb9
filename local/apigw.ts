import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { RouteDef } from '../functions/routes';

/**
 * API Gateway (REST API, Lambda proxy integration) emulation: matches a request to a route of the
 * manifest the way API Gateway does (literal path segments win over {params}) and builds the
 * exact event shape the deployed stage sends.
 */

type CompiledRoute = { route: RouteDef; segments: string[]; literals: number };

export const compileRoutes = (routes: readonly RouteDef[]): CompiledRoute[] =>
  routes
    .map((route) => {
      const segments = route.path.split('/').filter(Boolean);
      return { route, segments, literals: segments.filter((segment) => !segment.startsWith('{')).length };
    })
    .sort((a, b) => b.literals - a.literals);

export const matchRoute = (compiled: CompiledRoute[], method: string, path: string) => {
  const parts = path.split('/').filter(Boolean);
  for (const candidate of compiled) {
    if (candidate.route.method !== method || candidate.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const matches = candidate.segments.every((segment, index) => {
      const part = parts[index] as string;
      if (segment.startsWith('{')) {
        params[segment.slice(1, -1)] = decodeURIComponent(part);
        return true;
      }
      return segment === part;
    });
    if (matches) return { route: candidate.route, params };
  }
  return undefined;
};

/** Request headers with their original casing, as API Gateway passes them. */
const headersOf = (request: IncomingMessage) => {
  const headers: Record<string, string> = {};
  const multi: Record<string, string[]> = {};
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index] as string;
    const value = request.rawHeaders[index + 1] as string;
    headers[name] = value;
    (multi[name] ??= []).push(value);
  }
  return { headers, multi };
};

export const buildEvent = (options: {
  request: IncomingMessage;
  url: URL;
  route: RouteDef;
  params: Record<string, string>;
  body: string;
  stage: string;
}): APIGatewayProxyEvent => {
  const { request, url, route, params, body, stage } = options;
  const { headers, multi } = headersOf(request);
  const sourceIp = request.socket.remoteAddress ?? '127.0.0.1';
  const forwarded = { 'X-Forwarded-For': sourceIp, 'X-Forwarded-Port': String(request.socket.localPort ?? ''), 'X-Forwarded-Proto': 'http' };
  Object.assign(headers, forwarded);
  for (const [name, value] of Object.entries(forwarded)) multi[name] = [value];
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = value;
    (multiQuery[name] ??= []).push(value);
  }
  const now = Date.now();
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: route.method,
    headers,
    multiValueHeaders: multi,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: Object.keys(params).length ? params : null,
    stageVariables: null,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: undefined,
      domainName: headers.Host ?? headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      extendedRequestId: randomUUID(),
      httpMethod: route.method,
      identity: {
        accessKey: null, accountId: null, apiKey: null, apiKeyId: null, caller: null, clientCert: null,
        cognitoAuthenticationProvider: null, cognitoAuthenticationType: null, cognitoIdentityId: null,
        cognitoIdentityPoolId: null, principalOrgId: null, sourceIp, user: null, userArn: null,
        userAgent: request.headers['user-agent'] ?? null,
      },
      path: url.pathname,
      protocol: `HTTP/${request.httpVersion}`,
      requestId: randomUUID(),
      requestTime: new Date(now).toUTCString(),
      requestTimeEpoch: now,
      resourceId: route.id,
      resourcePath: route.path,
      stage,
    },
    body: body === '' ? null : body,
    isBase64Encoded: false,
  };
};

/** A Lambda context like the one the runtime passes (enough for middy and Powertools). */
export const lambdaContext = (functionName: string): Context => {
  const deadline = Date.now() + 29_000;
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
