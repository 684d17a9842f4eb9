import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { $ZodType, output } from 'zod/v4/core';
import { routeById, type RouteId } from '../../functions/routes';
import type { Credential } from '../db/merchants';
import { logger } from '../logger';
import { authenticate } from '../middleware/auth';
import { envelope } from '../middleware/envelope';
import { jsonBody } from '../middleware/json-body';
import { traceId } from '../middleware/trace';
import type { ApiContext, Reply } from '../middleware/types';
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

/**
 * Builds a route's Lambda handler: the shared middy chain, then the route's own logic.
 * trace id -> envelope + errors -> auth -> JSON body -> validation -> handler.
 * (Auth runs before the body is parsed, so an unauthenticated caller learns nothing else.)
 */
export const apiHandler = <S extends Schemas>(
  routeId: RouteId,
  schemas: S,
  handle: (request: ApiRequest<S>) => Promise<Reply>,
) => {
  const route = routeById(routeId);
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(traceId())
    .use(envelope(route.envelope))
    .use(authenticate({ placesOrders: route.placesOrders }))
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
};
