import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Claim } from '../db/entities/idempotency';
import type { Credential } from '../db/merchants';
import type { Meta } from '../http/envelope';

/** What the middleware chain adds to the Lambda context, step by step. */
export type ApiContext = Context & {
  traceId: string;
  credential?: Credential;
  /** The parsed JSON body (undefined when the request had none). */
  jsonBody?: unknown;
  input?: { body: unknown; query: unknown; params: unknown };
  /** Set while this request holds its Idempotency-Key (shared/middleware/idempotency.ts). */
  idempotency?: Claim;
};

/** What a handler returns; the envelope middleware turns it into the HTTP response. */
export type Reply = { statusCode?: number; data: unknown; meta?: Meta; message?: string };

export type ApiMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ApiContext>;
