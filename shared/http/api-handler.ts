import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { $ZodType, output } from 'zod/v4/core';
import { acceptsIdempotencyKey, routeById, type RouteId } from '../../functions/routes';
import type { Credential } from '../db/merchants';
import { logger } from '../logger';
import { authenticate } from '../middleware/auth';
import { envelope } from '../middleware/envelope';
import { jsonBody } from '../middleware/json-body';
import { traceId } from '../middleware/trace';
import type { ApiContext, ApiMiddleware, Reply } from '../middleware/types';
import { validate, type Schemas } from '../middleware/validate';

type Out<T> = T extends $ZodType ? output<T> : undefined;

export type ApiRequest<S extends Schemas> = {
  body: Out<S['body']>;
  query: Out<S['query']>;
  params: Out<S['params']>;
  merchant: Credential['merchant'];
  token: Credential['token'];
  traceId: string;
  /** The request URL without its query, and the raw query: for pagination links. */
  link: { url: string; rawQuery: Record<string, string> };
};

const requestLink = (event: APIGatewayProxyEvent): ApiRequest<Schemas>['link'] => {
  const header = (name: string) => Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
  const proto = header('x-forwarded-proto') ?? 'https';
  const host = header('host') ?? 'localhost';
  const rawQuery = Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return { url: `${proto}://${host}${event.requestContext?.path ?? event.path}`, rawQuery };
};

/** The two halves of Idempotency-Key handling (shared/middleware/idempotency.ts). */
export type IdempotencyMiddlewares = { claimKey: ApiMiddleware; recordResponse: ApiMiddleware };

export type Handle<S extends Schemas> = (request: ApiRequest<S>) => Promise<Reply>;

/**
 * The shared middy chain, then the route's own logic:
 * trace id -> envelope + errors -> auth -> JSON body -> validation -> handler.
 * (Auth runs before the body is parsed, so an unauthenticated caller learns nothing else.)
 *
 * POST routes add the two halves of Idempotency-Key handling: the key is claimed right after auth
 * (it belongs to the merchant) and before the body is parsed, so a malformed or invalid body's
 * 422 is stored and replayed too; the response is recorded outside the envelope, so what is
 * stored is the final HTTP response, errors included:
 * trace id -> [record response] -> envelope -> auth -> [claim key] -> JSON body -> validation -> handler.
 */
export const buildApiHandler = <S extends Schemas>(routeId: RouteId, schemas: S, handle: Handle<S>, idempotency?: IdempotencyMiddlewares) => {
  const route = routeById(routeId);
  if (acceptsIdempotencyKey(route) !== (idempotency !== undefined)) {
    throw new Error(`${routeId}: ${acceptsIdempotencyKey(route) ? 'a POST route is built with postApiHandler' : 'only POST routes take Idempotency-Key'}`);
  }
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(traceId())
    .use(idempotency ? [idempotency.recordResponse] : [])
    .use(envelope(route.envelope))
    .use(authenticate({ placesOrders: route.placesOrders }))
    .use(idempotency ? [idempotency.claimKey] : [])
    .use(jsonBody())
    .use(validate(schemas))
    .handler(async (event, context) => {
      const { credential, input } = context;
      if (!credential || !input) throw new Error('middleware chain did not run');
      const reply = await handle({
        body: input.body as Out<S['body']>,
        query: input.query as Out<S['query']>,
        params: input.params as Out<S['params']>,
        merchant: credential.merchant,
        token: credential.token,
        traceId: context.traceId,
        link: requestLink(event),
      });
      return reply as unknown as APIGatewayProxyResult;
    });
  // The schemas the route validates with, for the test that holds the OpenAPI document to them.
  return Object.assign(handler, { schemas });
};

/**
 * A GET or PATCH route's Lambda handler. POST routes use postApiHandler
 * (shared/http/post-api-handler.ts), which adds Idempotency-Key: a separate module, so that the
 * read-only functions do not bundle its writes.
 */
export const apiHandler = <S extends Schemas>(routeId: RouteId, schemas: S, handle: Handle<S>) => buildApiHandler(routeId, schemas, handle);
