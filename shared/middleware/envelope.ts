import type { APIGatewayProxyResult } from 'aws-lambda';
import { logger } from '../logger';
import { ApiError, busy, MESSAGES, type FieldErrors } from '../errors';
import { legacyFailureBody, legacySuccessBody, v2Body, type EnvelopeKind } from '../http/envelope';
import type { ApiMiddleware, Reply } from './types';

const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...(statusCode === 503 ? { 'retry-after': '1' } : {}), ...headers },
  body: JSON.stringify(body),
});

/**
 * A dependency that did not answer in time or asked us to slow down (the SDK's TimeoutError after
 * its retries, DynamoDB or SQS throttling, a 5xx of the service): nothing about the request is
 * wrong and a retry may well pass, so the client gets 503 with Retry-After, not a 500.
 */
const TRANSIENT_ERRORS = new Set([
  'TimeoutError',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
]);
export const isTransientDependencyError = (error: unknown): boolean => TRANSIENT_ERRORS.has((error as Error | undefined)?.name ?? '');

/**
 * Turns a handler's Reply into the route's envelope, and any error into a failure envelope.
 * An ApiError exposes its status and messages; a transient dependency error is a 503; anything
 * else is logged with the trace id and answered with a generic 500.
 */
export const envelope = (kind: EnvelopeKind): ApiMiddleware => {
  const failure = (traceId: string, statusCode: number, errors: FieldErrors, headers?: Record<string, string>) =>
    json(statusCode, kind === 'v2' ? v2Body(traceId, { errors }) : legacyFailureBody(statusCode, errors), headers);

  return {
    after: (request) => {
      const reply = request.response as unknown as Reply;
      const statusCode = reply.statusCode ?? 200;
      request.response =
        kind === 'v2'
          ? json(statusCode, v2Body(request.context.traceId, { data: reply.data, meta: reply.meta }))
          : json(statusCode, legacySuccessBody(reply.message ?? 'OK', reply.data));
    },
    // Sets the response without returning it: a returned value would end middy's onError stack
    // here, and the middlewares outside this one (the idempotency record, the logger) must still
    // see the final response.
    onError: (request) => {
      const { error } = request;
      if (error instanceof ApiError) {
        request.response = failure(request.context.traceId, error.statusCode, error.errors, error.headers);
        return;
      }
      if (isTransientDependencyError(error)) {
        logger.error('A dependency timed out or throttled; answered 503', error as Error);
        const refusal = busy();
        request.response = failure(request.context.traceId, refusal.statusCode, refusal.errors);
        return;
      }
      logger.error('Unhandled error', error as Error);
      request.response = failure(request.context.traceId ?? 'unknown', 500, { message: [MESSAGES.serverError] });
    },
  };
};
