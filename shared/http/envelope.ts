import type { APIGatewayProxyResult } from 'aws-lambda';
import type * as z from 'zod/mini';
import { isPassingDependencyFailure } from '#shared/dependency-errors';
import { ApiError, busy, type FieldErrors, MESSAGES } from '#shared/errors';
import { logger } from '#shared/logger';
import type {
  Check,
  cursorPaginationSchema,
  invitePaginationSchema,
  laravelPaginationSchema,
  legacySuccess,
  logCursorSchema,
  Same,
  v2Failure,
} from '#shared/schemas/responses';
import type { ApiMiddleware } from './types';

export type EnvelopeKind = 'v2' | 'legacy';

/** What a reply adds to `meta`, as shared/schemas/responses.ts documents it. */
export type Meta = {
  pagination?: z.output<typeof laravelPaginationSchema | typeof invitePaginationSchema | typeof cursorPaginationSchema>;
  as_of?: string | null;
} & Partial<z.output<typeof logCursorSchema>>;

/** What a route's handler returns (`data` as the route's response declares it); envelopeResponse turns it into the HTTP response. */
export type Reply<D = unknown> = { data: D; meta?: Meta; message?: string };

export const v2Body = (traceId: string, outcome: { data: unknown; meta?: Meta } | { errors: FieldErrors }) =>
  'errors' in outcome
    ? { success: false, data: null, errors: outcome.errors, meta: { trace_id: traceId } }
    : { success: true, data: outcome.data, errors: null, meta: { ...outcome.meta, trace_id: traceId } };

export const legacySuccessBody = (message: string, data: unknown) => ({ success: true, message, data });

/** Compile-time: the bodies built here have the documented envelopes' fields. */
export type EnvelopeShapesMatch = [
  Check<Same<ReturnType<typeof v2Body>['success'], boolean>>,
  Check<Same<keyof ReturnType<typeof v2Body>, keyof z.output<typeof v2Failure>>>,
  Check<Same<keyof ReturnType<typeof legacySuccessBody>, keyof z.output<ReturnType<typeof legacySuccess>>>>,
];

/** The legacy endpoint's failure shapes, one per status the spec lists. */
export const legacyFailureBody = (statusCode: number, errors: FieldErrors) => {
  if (statusCode === 401) return { message: MESSAGES.unauthenticated };
  const message = statusCode === 422 ? MESSAGES.invalidData : (Object.values(errors)[0]?.[0] ?? MESSAGES.serverError);
  // A malformed header (400) names its field, as a validation failure does.
  return { success: false, message, data: statusCode === 422 || statusCode === 400 ? { errors } : [] };
};

const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...(statusCode === 503 ? { 'retry-after': '1' } : {}), ...headers },
  body: JSON.stringify(body),
});

/** The status of a route's success: 200 unless its manifest entry says 201 or 202. */
export const successStatus = (route: { status?: number }): number => route.status ?? 200;

export const envelopeResponse = (
  route: { envelope: EnvelopeKind; status?: number },
  traceId: string,
  reply: Reply,
): APIGatewayProxyResult =>
  json(
    successStatus(route),
    route.envelope === 'v2'
      ? v2Body(traceId, { data: reply.data, meta: reply.meta })
      : legacySuccessBody(reply.message ?? 'OK', reply.data),
  );

/** A finished answer thrown from a step the handler awaits (an Idempotency-Key's stored response): answered as it is. */
export class AnsweredEarly extends Error {
  override name = 'AnsweredEarly';
  constructor(readonly response: APIGatewayProxyResult) {
    super('Answered from a stored response');
  }
}

/** Any error as a failure in the route's envelope: an ApiError as it is, a passing dependency failure 503, anything else a logged 500. */
export const errorEnvelope = (kind: EnvelopeKind): ApiMiddleware => ({
  // Sets the response without returning it, so the middlewares outside this one still see it.
  onError: (request) => {
    const error = request.error ?? new Error('unknown error');
    if (error instanceof AnsweredEarly) {
      request.response = error.response;
      return;
    }
    const refusal =
      error instanceof ApiError
        ? error
        : isPassingDependencyFailure(error)
          ? busy()
          : new ApiError(500, { message: [MESSAGES.serverError] });
    if (!(error instanceof ApiError))
      logger.error(
        refusal.statusCode === 503 ? 'A dependency was unavailable, throttled or in conflict; answered 503' : 'Unhandled error',
        error,
      );
    const { statusCode, errors, headers } = refusal;
    const traceId = request.context.traceId ?? 'unknown';
    request.response = json(statusCode, kind === 'v2' ? v2Body(traceId, { errors }) : legacyFailureBody(statusCode, errors), headers);
  },
});
