import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Claim } from '#shared/db/entities/idempotency';

/** The Lambda context as the request chain sees it: the trace id middleware sets `traceId` first. */
export type ApiContext = Context & {
  traceId: string;
  /** Set while this request holds its Idempotency-Key (shared/http/idempotency.ts). */
  idempotency?: Claim;
  /** The request's Idempotency-Key and fingerprint, once validated: who its writes are (shared/request-identity.ts). */
  requestKey?: RequestKey;
  alongside?: Promise<void>[];
};

export type RequestKey = { key: string; fingerprint: string };

/** A request header's value, its name in any casing (API Gateway passes the last of a repeated one). */
export const headerOf = (event: Pick<APIGatewayProxyEvent, 'headers'>, name: string): string | undefined =>
  Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1] ?? undefined;

export type ApiMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>;
