import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Credential } from '#shared/db/merchants';
import { logger } from '#shared/logger';
import { type RequestIdentity, requestIdentity } from '#shared/request-identity';
import { authentication } from './auth';
import { envelopeResponse, errorEnvelope, type Reply } from './envelope';
import type { idempotencyKey } from './idempotency';
import { putQuotaHeaders, type QuotaContext, quota } from './quota';
import { type ApiRoute, acceptsIdempotencyKey, type ReadOrPatchRoute, type ReplyDataOf, readsBody } from './route';
import { traceId } from './trace';
import { type ApiContext, type ApiMiddleware, headerOf } from './types';
import { type Input, type Schemas, validation } from './validate';

/** What a route's handler receives: its validated input, who is calling, and the request's links. */
export type ApiRequest<S extends Schemas> = Input<S> &
  Credential &
  Pick<QuotaContext, 'admitted' | 'decided'> & {
    traceId: string;
    /** The request URL without its query, and the raw query: for pagination links. */
    link: { url: string; rawQuery: Record<string, string> };
    /** Who this request's writes are (from its Idempotency-Key, if any): a retry recognises its own applied write. */
    identity: RequestIdentity;
    /** Work the answer waits for but does not depend on (a count after the commit): it runs beside the recording of the answer. */
    alongside: (work: Promise<void>) => void;
  };

/** A route's handler: its validated request in, the reply its route declares out (`data` typed by the route's response). */
export type Handle<S extends Schemas, D = unknown> = (request: ApiRequest<S>) => Promise<Reply<D>>;

const requestLink = (event: APIGatewayProxyEvent): ApiRequest<Schemas>['link'] => {
  const proto = headerOf(event, 'x-forwarded-proto') ?? 'https';
  const host = headerOf(event, 'host') ?? 'localhost';
  const rawQuery = Object.fromEntries(
    Object.entries(event.queryStringParameters ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return { url: `${proto}://${host}${event.requestContext?.path ?? event.path}`, rawQuery };
};

/** The answer waits for the work that went alongside it, ended while the request's log keys (its trace id) are still set. */
const alongsideWork = (): ApiMiddleware => {
  const finish = async (request: { context: ApiContext }) => {
    await Promise.allSettled(request.context.alongside ?? []);
  };
  return { after: finish, onError: finish };
};

/** The one request chain of every route, typed step by step (order of steps: docs/design-notes.md#idempotency-key). */
export const buildApiHandler = <S extends Schemas, R extends ApiRoute>(
  route: R,
  schemas: S,
  handle: Handle<S, ReplyDataOf<R>>,
  idempotency?: { claimKey: ReturnType<typeof idempotencyKey>; recordResponse: ApiMiddleware },
) => {
  // The types already keep POST routes to postApiHandler; this guards plain JavaScript callers.
  if (acceptsIdempotencyKey(route) !== (idempotency !== undefined)) {
    throw new Error(
      `${route.id}: ${acceptsIdempotencyKey(route) ? 'a POST route is built with postApiHandler' : 'only POST routes take Idempotency-Key'}`,
    );
  }
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>({ requestEnd: putQuotaHeaders })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(alongsideWork())
    .use(traceId())
    .use(idempotency ? [idempotency.recordResponse] : [])
    .use(errorEnvelope(route.envelope))
    .use(authentication(route))
    .use(quota(route))
    .use(validation(schemas, readsBody(route)))
    .use(idempotency ? [idempotency.claimKey] : [])
    .handler(async (event, context) => {
      const { credential, input, traceId, admitted, decided } = context;
      const reply = await handle({
        ...input,
        ...credential,
        traceId,
        link: requestLink(event),
        identity: requestIdentity(credential.merchant.id, context.requestKey),
        admitted,
        decided,
        alongside: (work) => {
          context.alongside = [...(context.alongside ?? []), work];
        },
      });
      // No answer before the quota's decision, whether or not the handler awaited it.
      await admitted();
      return envelopeResponse(route, traceId, reply);
    });
  // The schemas the route validates with: the OpenAPI generator documents these (scripts/openapi-document.ts).
  return Object.assign(handler, { schemas });
};

/** A GET, PATCH or DELETE route's handler; POST routes use postApiHandler, a module of its own so others do not bundle its writes. */
export const apiHandler = <S extends Schemas, R extends ReadOrPatchRoute>(route: R, schemas: S, handle: Handle<S, ReplyDataOf<R>>) =>
  buildApiHandler(route, schemas, handle);
