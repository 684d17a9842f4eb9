import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Credential } from '../db/merchants';
import { logger } from '../logger';
import { authenticate } from './auth';
import { envelopeResponse, errorEnvelope, type Reply } from './envelope';
import { parseJsonBody } from './json-body';
import { acceptsIdempotencyKey, type ApiRoute, type ReadOrPatchRoute } from './route';
import { traceId } from './trace';
import type { ApiContext, ApiMiddleware } from './types';
import { type Input, type Schemas, validateInput } from './validate';

/** What a route's handler receives: its validated input, who is calling, and the request's links. */
export type ApiRequest<S extends Schemas> = Input<S> & {
  merchant: Credential['merchant'];
  token: Credential['token'];
  traceId: string;
  /** The request URL without its query, and the raw query: for pagination links. */
  link: { url: string; rawQuery: Record<string, string> };
};

export type Handle<S extends Schemas> = (request: ApiRequest<S>) => Promise<Reply>;

const requestLink = (event: APIGatewayProxyEvent): ApiRequest<Schemas>['link'] => {
  const header = (name: string) => Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];
  const proto = header('x-forwarded-proto') ?? 'https';
  const host = header('host') ?? 'localhost';
  const rawQuery = Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return { url: `${proto}://${host}${event.requestContext?.path ?? event.path}`, rawQuery };
};

/** The two halves of Idempotency-Key handling (shared/http/idempotency.ts). */
export type IdempotencyHandling = {
  claimKey: (event: APIGatewayProxyEvent, context: ApiContext, merchantId: string) => Promise<APIGatewayProxyResult | undefined>;
  recordResponse: ApiMiddleware;
};

/**
 * The one request chain of every route, in order:
 *
 *   trace id -> [record response] -> error envelope -> auth -> [claim key] -> JSON body -> validation -> handler -> envelope
 *
 * The middy middlewares wrap the request (trace id first; the error envelope turns any failure into
 * the route's envelope). The steps inside run in order and each hands the next what it found, typed:
 * auth the credential, validation the input as the route's schemas output it, the handler its Reply.
 * Auth runs before the body is parsed, so an unauthenticated caller learns nothing else.
 *
 * POST routes add the two halves of Idempotency-Key handling: the key is claimed right after auth
 * (it belongs to the merchant) and before the body is parsed, so a malformed or invalid body's
 * 422 is stored and replayed too; the response is recorded outside the error envelope, so what is
 * stored is the final HTTP response, errors included.
 */
export const buildApiHandler = <S extends Schemas>(route: ApiRoute, schemas: S, handle: Handle<S>, idempotency?: IdempotencyHandling) => {
  // The types already keep POST routes to postApiHandler; this guards plain JavaScript callers.
  if (acceptsIdempotencyKey(route) !== (idempotency !== undefined)) {
    throw new Error(`${route.id}: ${acceptsIdempotencyKey(route) ? 'a POST route is built with postApiHandler' : 'only POST routes take Idempotency-Key'}`);
  }
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(traceId())
    .use(idempotency ? [idempotency.recordResponse] : [])
    .use(errorEnvelope(route.envelope))
    .handler(async (event, context) => {
      const { merchant, token } = await authenticate(event, { placesOrders: route.placesOrders });
      const replay = await idempotency?.claimKey(event, context, merchant.id);
      if (replay) return replay;
      const input = validateInput(schemas, event, parseJsonBody(event));
      const reply = await handle({ ...input, merchant, token, traceId: context.traceId, link: requestLink(event) });
      return envelopeResponse(route.envelope, context.traceId, reply);
    });
};

/**
 * A GET or PATCH route's Lambda handler, built from its manifest entry (functions/routes.ts).
 * POST routes use postApiHandler (shared/http/post-api-handler.ts), which adds Idempotency-Key: a
 * separate module, so that the read-only functions do not bundle its writes.
 */
export const apiHandler = <S extends Schemas>(route: ReadOrPatchRoute, schemas: S, handle: Handle<S>) => buildApiHandler(route, schemas, handle);
