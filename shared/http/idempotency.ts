import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { functionTable } from '#shared/db/client';
import { claimKey, completeKey, releaseKey, type StoredResponse } from '#shared/db/entities/idempotency';
import { withWriteRetry } from '#shared/db/retry';
import { ApiError, IDEMPOTENCY_MESSAGES, keyReused, MAX_IDEMPOTENCY_KEY_LENGTH } from '#shared/errors';
import { logger } from '#shared/logger';
import type { AuthenticatedContext } from './auth';
import { requestFingerprint } from './request-fingerprint';
import type { ApiMiddleware } from './types';

/**
 * `Idempotency-Key` on POST routes (IETF draft "The Idempotency-Key HTTP Header Field", Stripe's
 * behaviour). Two middlewares, because the key needs the merchant (so it is claimed after auth)
 * while the stored response must be the final HTTP response (so it is recorded outside the
 * envelope):
 *
 *   trace id -> idempotentResponse -> error envelope -> authentication -> idempotencyKey -> JSON body -> validation -> handler
 *
 * - idempotencyKey (before, after authentication): no header, nothing happens. A malformed key is 400 `idempotency_key`.
 *   Otherwise it claims the key for this merchant; if another request holds it: a different
 *   request (method, path, body) is 422, one still in flight is 409 with Retry-After, a finished
 *   one is answered with its stored response (same status and body, `Idempotent-Replayed: true`)
 *   and nothing else runs.
 * - idempotentResponse (after, onError): stores the final response of a claimed key (2xx, 4xx:
 *   body validation failures included), or releases the key on a 5xx so a retry runs again.
 */

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
export const MAX_KEY_LENGTH = MAX_IDEMPOTENCY_KEY_LENGTH;

/**
 * Seconds a client should wait before retrying a request whose key is still in flight. Most such
 * requests finish within a second; one whose function died holds the key until its lease runs out
 * (the function's timeout plus a margin), and a retry then takes it over.
 */
const RETRY_AFTER_SECONDS = 1;

/**
 * How long a claim protects an in-flight request: what is left of the invocation (Lambda ends it
 * at the function timeout) plus a margin. Past it, the invocation has certainly ended, so a retry
 * may take the key over: a Lambda that crashed mid-request never blocks its key for good.
 */
const LEASE_MARGIN_MS = 5_000;
const DEFAULT_REMAINING_MS = 30_000;
const leaseMs = (context: Context) => (context.getRemainingTimeInMillis?.() || DEFAULT_REMAINING_MS) + LEASE_MARGIN_MS;

/** The header's value (any casing; API Gateway passes the last one when it is sent twice). */
export const idempotencyKeyOf = (event: APIGatewayProxyEvent): string | undefined =>
  Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === IDEMPOTENCY_KEY_HEADER)?.[1] ?? undefined;

const checkKey = (key: string) => {
  const length = [...key].length;
  // A malformed header is a bad request (400), as the IETF draft answers it.
  if (length === 0) throw new ApiError(400, { idempotency_key: [IDEMPOTENCY_MESSAGES.required] });
  if (length > MAX_KEY_LENGTH) throw new ApiError(400, { idempotency_key: [IDEMPOTENCY_MESSAGES.tooLong] });
};

const replay = (stored: StoredResponse): APIGatewayProxyResult => ({
  statusCode: stored.statusCode,
  headers: { ...stored.headers, [REPLAYED_HEADER]: 'true' },
  body: stored.body,
});

/**
 * Validates and claims the key for the authenticated merchant (so it runs after authentication),
 * or answers for it: a finished request with this key gets its stored response, and nothing else runs.
 */
export const idempotencyKey = (): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, AuthenticatedContext> => ({
  before: async (request) => {
    const { event, context } = request;
    const key = idempotencyKeyOf(event);
    if (key === undefined) return undefined;
    checkKey(key);
    const fingerprint = requestFingerprint(event);
    const outcome = await withWriteRetry(() =>
      claimKey(functionTable, { merchantId: context.credential.merchant.id, key, fingerprint, leaseMs: leaseMs(context) }),
    );
    if (outcome.claimed) {
      context.idempotency = outcome.claim;
      return undefined;
    }
    const { record } = outcome;
    if (record.fingerprint !== fingerprint) throw keyReused();
    if (record.status === 'in_progress') {
      throw new ApiError(409, { message: [IDEMPOTENCY_MESSAGES.inFlight] }, { 'retry-after': String(RETRY_AFTER_SECONDS) });
    }
    // Early return: middy skips the handler and every `after`, and answers this.
    return replay(record.response);
  },
});

/** Records the final response of a claimed key; must sit outside the envelope. */
export const idempotentResponse = (): ApiMiddleware => {
  const settle = async (request: Parameters<NonNullable<ApiMiddleware['after']>>[0]) => {
    const claim = request.context.idempotency;
    const response = request.response;
    if (!claim) return;
    request.context.idempotency = undefined;
    try {
      if (!response || response.statusCode >= 500) {
        await withWriteRetry(() => releaseKey(functionTable, claim));
        return;
      }
      const stored: StoredResponse = {
        statusCode: response.statusCode,
        headers: Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, value]) => [name, String(value)])),
        body: response.body,
      };
      // Retried like every write: a throttled or conflicted record would make the next retry run the request again.
      if (!(await withWriteRetry(() => completeKey(functionTable, claim, stored))))
        logger.warn('Idempotency claim lost before the response was stored', { key: claim.key });
    } catch (error) {
      // The client still gets its answer; the key stays in flight until its lease ends.
      logger.error('Could not record the idempotent response', error instanceof Error ? error : String(error));
    }
  };
  return {
    after: settle,
    // No return value: the response stays the envelope's, and later onError middlewares run.
    onError: async (request) => {
      await settle(request);
    },
  };
};
