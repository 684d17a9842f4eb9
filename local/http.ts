import { createServer, type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { type RouteDef, routes } from '#functions/routes';
import { MAX_BODY_BYTES, MESSAGES } from '#shared/errors';
import { type EnvelopeKind, v2Body } from '#shared/http/envelope';
import { newTraceId } from '#shared/http/trace';
import { rateLimitKey } from '#shared/rate-limit';
import { buildEvent, compileRoutes, lambdaContext, MalformedPathParameterError, matchRoute } from './apigw';
import { docsPage } from './docs';
import type { RateLimiter } from './rate-limit';

/** The local API Gateway front door of one stage: every request gets an answer (docs/architecture.md#local-shape-npm-start). */

type ApiServerOptions = {
  stage: string;
  invoke: (route: RouteDef, event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
  rateLimiter: RateLimiter;
  /** Local-only pages besides the API (the webhook inbox): true when it answered the request. */
  pages: (request: IncomingMessage, url: URL, response: ServerResponse) => Promise<boolean>;
  /** Unexpected per-request failures (a handler that throws); the server carries on. */
  onError: (error: unknown) => void;
};

const LEGACY_PATHS = new Set<string>(routes.flatMap((route) => (route.envelope === 'legacy' ? [route.path] : [])));

/** Which envelope a path speaks even when it matches no route (or cannot be parsed). */
const envelopeForPath = (path: string | undefined): EnvelopeKind =>
  path !== undefined && LEGACY_PATHS.has(path.split('?')[0]?.replace(/\/+$/, '') ?? '') ? 'legacy' : 'v2';

const errorBody = (envelope: EnvelopeKind, message: string) =>
  JSON.stringify(envelope === 'legacy' ? { success: false, message, data: [] } : v2Body(newTraceId(), { errors: { message: [message] } }));

/** The request target of a raw request that the parser refused, when its first line is readable. */
const targetOf = (rawPacket: unknown) => {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  const firstLine = rawPacket.subarray(0, 8192).toString('latin1').split('\r\n')[0] ?? '';
  return firstLine.split(' ')[1];
};

export const send = (response: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}) => {
  if (response.headersSent || response.destroyed) return;
  // API Gateway sends a Content-Length, never a chunked body.
  const merged: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(headers)) merged[name.toLowerCase()] = String(value);
  merged['content-length'] = String(Buffer.byteLength(body));
  response.writeHead(status, merged).end(body);
};

/** Splits a request target into path and query without trusting the Host header. */
const urlOf = (target: string) => {
  if (target.startsWith('/')) return new URL(`http://localhost${target}`);
  const absolute = new URL(target); // absolute-form (a proxy request): throws when malformed
  return new URL(`http://localhost${absolute.pathname}${absolute.search}`);
};

const readBody = async (request: IncomingMessage): Promise<string | 'too-large'> => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size >= MAX_BODY_BYTES) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
};

export const createApiServer = (options: ApiServerOptions): Server => {
  const compiled = compileRoutes(routes);
  const { onError } = options;

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const target = request.url ?? '/';
    let envelope = envelopeForPath(target);
    let url: URL;
    try {
      url = urlOf(target);
    } catch {
      return send(response, 400, errorBody(envelope, 'The request target is not a valid URL.'));
    }
    envelope = envelopeForPath(url.pathname);

    // The contract and its reference page, without a token (local/docs.ts).
    const docs = docsPage(request, url.pathname, options.stage);
    if (docs) {
      request.resume();
      return send(response, 200, docs[1], { 'content-type': docs[0], 'cache-control': 'no-cache' });
    }
    if (await options.pages(request, url, response)) return;

    // Answers before the body is read: what is left of it is drained.
    const refuse = (status: number, body: string, headers?: Record<string, string>) => {
      request.resume();
      send(response, status, body, headers);
    };

    // WAF runs before API Gateway: it counts every request carrying the key, routed or not.
    const authorization = request.headers.authorization;
    const retryAfter = authorization === undefined ? undefined : options.rateLimiter.take(rateLimitKey(authorization));
    if (retryAfter !== undefined) return refuse(429, errorBody('v2', MESSAGES.tooManyAttempts), { 'retry-after': String(retryAfter) });

    // The WebACL's size rule, answered once the body is drained: closing while the client still sends breaks its request (EPIPE).
    if (Number(request.headers['content-length']) >= MAX_BODY_BYTES) {
      request.once('end', () => send(response, 413, errorBody('v2', MESSAGES.bodyTooLarge), { connection: 'close' }));
      request.resume();
      return;
    }

    let match: ReturnType<typeof matchRoute>;
    try {
      match = matchRoute(compiled, request.method ?? 'GET', url.pathname);
    } catch (error) {
      if (!(error instanceof MalformedPathParameterError)) throw error;
      return refuse(400, errorBody(envelope, error.message));
    }
    if (!match) return refuse(404, errorBody('v2', MESSAGES.notFound));

    let body: string | 'too-large';
    try {
      body = await readBody(request);
    } catch {
      // The client hung up mid-body (or the socket broke): nobody is left to answer.
      response.destroy();
      return;
    }
    if (body === 'too-large') {
      send(response, 413, errorBody('v2', MESSAGES.bodyTooLarge), { connection: 'close' });
      request.destroy();
      return;
    }

    const event = buildEvent({ request, url, route: match.route, params: match.params, body, stage: options.stage });
    let result: APIGatewayProxyResult;
    try {
      result = await options.invoke(match.route, event, lambdaContext(match.route.id));
    } catch (error) {
      // What API Gateway answers when the integration fails.
      onError(error);
      return send(response, 502, JSON.stringify({ message: 'Internal server error' }));
    }
    send(response, result.statusCode, result.body ?? '', result.headers as Record<string, string>);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      onError(error);
      send(response, 500, errorBody(envelopeForPath(request.url), MESSAGES.serverError));
    });
  });

  // Framing errors, oversized headers, timeouts: answered in the path's envelope (node's default answer has no body).
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // What node's HTTP parser refused means for the client.
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const body = errorBody(envelopeForPath(targetOf(error.rawPacket)), STATUS_CODES[status] ?? 'Bad Request');
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  return server;
};
