/**
 * API Gateway REST (Lambda proxy) events and a Lambda context, as the deployed stage sends them,
 * so handlers can be invoked directly.
 */

import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { expect } from 'vitest';
import { type RouteId, routeById } from '#functions/routes';
import { type WorkerId, workers } from '#functions/workers';
import { lambdaContext as localLambdaContext, proxyEvent } from '#local/apigw';
import { TRACE_ID } from './trace-id';

export type EventOptions = {
  /** The bearer token; null sends no Authorization header. */
  token?: string | null;
  headers?: Record<string, string>;
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  /** A value to send as JSON. */
  body?: unknown;
  /** The body exactly as sent (wins over `body`). */
  rawBody?: string;
  isBase64Encoded?: boolean;
  stage?: string;
};

const fillPath = (template: string, params: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));

/** The event API Gateway sends for one request to the route `routeId`. */
export const apiEvent = (routeId: RouteId, options: EventOptions = {}): APIGatewayProxyEvent => {
  const route = routeById(routeId);
  const stage = options.stage ?? 'live';
  const path = fillPath(route.path, options.pathParameters ?? {});
  const defaults: Record<string, string> = {
    Accept: 'application/json',
    Host: 'api.unit.test',
    'X-Forwarded-Proto': 'https',
    ...(options.token === null ? {} : { Authorization: `Bearer ${options.token ?? ''}` }),
    ...(options.body !== undefined || options.rawBody !== undefined ? { 'Content-Type': 'application/json' } : {}),
  };
  // A header given in options replaces the default of the same name in any casing, as on the wire.
  const overridden = new Set(Object.keys(options.headers ?? {}).map((name) => name.toLowerCase()));
  const headers: Record<string, string> = {
    ...Object.fromEntries(Object.entries(defaults).filter(([name]) => !overridden.has(name.toLowerCase()))),
    ...options.headers,
  };
  const body = options.rawBody ?? (options.body === undefined ? null : JSON.stringify(options.body));
  return proxyEvent({
    route,
    path,
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    query: options.query ? Object.fromEntries(Object.entries(options.query).map(([name, value]) => [name, [value]])) : undefined,
    pathParameters: options.pathParameters,
    body,
    isBase64Encoded: options.isBase64Encoded,
    stage,
    sourceIp: '203.0.113.7',
    // API Gateway's requestContext.path carries the stage: that is the URL the client called.
    contextPath: `/${stage}${path}`,
    apiId: 'unitapi',
  });
};

/** The same Lambda context the local runtime passes to an API function (the routes' timeout). */
export const lambdaContext = (functionName = 'unit-function'): Context => localLambdaContext(functionName);

/** The Lambda context of a worker: its own name and timeout (functions/workers.ts), as the local runtime passes it. */
export const workerContext = (id: WorkerId): Context => {
  const worker = workers.find((candidate) => candidate.id === id);
  if (!worker) throw new Error(`No worker ${id}`);
  return localLambdaContext(worker.id, worker.timeoutSeconds);
};

/** Any of our middy handlers (their context type is the chain's own, hence `never`). */
type ApiLambda = (event: APIGatewayProxyEvent, context: never) => Promise<unknown>;

export type ApiResponse = {
  statusCode: number;
  headers: APIGatewayProxyResult['headers'];
  /** The parsed JSON body: `any`, so tests read it freely. */
  body: any;
  /** The body as sent, for checks that nothing leaked. */
  raw: string;
};

/** Invokes a handler as Lambda would and parses its JSON body. */
export const invoke = async (handler: ApiLambda, event: APIGatewayProxyEvent): Promise<ApiResponse> => {
  const result = (await handler(event, lambdaContext() as never)) as APIGatewayProxyResult;
  return { statusCode: result.statusCode, headers: result.headers, body: JSON.parse(result.body), raw: result.body };
};

/**
 * Asserts a V2 failure: the status and the whole envelope, `errors` keyed by field (or `message`),
 * with a trace id of the API's form.
 */
export const expectV2Error = (response: ApiResponse, statusCode: number, errors: Record<string, string[]>) => {
  expect({ statusCode: response.statusCode, body: response.body }).toEqual({
    statusCode,
    body: { success: false, data: null, errors, meta: { trace_id: expect.stringMatching(TRACE_ID) } },
  });
};
