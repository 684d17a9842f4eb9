import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import { errorName } from '#shared/errors';

/**
 * The one classification of what a dependency (DynamoDB, SQS, SES) threw, used by the write
 * retries (db/retry.ts), the error envelope (503 or 500) and the X-Ray subsegments. It starts from
 * the SDK's own classifiers (the ones its retry strategy uses), and adds what only DynamoDB says
 * inside a TransactionCanceledException: a cancellation for a conflict or for throttling is as
 * passing as the plain exceptions, though the SDK does not retry it.
 *
 * - `conflict`: another transaction held an item (TransactionConflict); retry the write.
 * - `throttled`: the table, an index or the account is over its capacity; retry with back-off.
 * - `unavailable`: no answer in time, a refused or reset connection, a 5xx: the call may or may
 *   not have been applied; the client gets 503 and retries (Idempotency-Key makes that safe).
 * - `refused`: a TransactionCanceledException for conditions (the caller reads its reasons), or
 *   any other client error: the caller's own business.
 */
export type DependencyFailure = 'conflict' | 'throttled' | 'unavailable' | 'refused';

/** Cancellation reason codes DynamoDB gives per part of a cancelled transaction. */
const CONFLICT_REASONS = new Set(['TransactionConflict']);
const THROTTLE_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

const cancellationCodes = (error: unknown): string[] => {
  if (typeof error !== 'object' || error === null || !('CancellationReasons' in error) || !Array.isArray(error.CancellationReasons))
    return [];
  return error.CancellationReasons.map((reason: unknown) =>
    typeof reason === 'object' && reason !== null && 'Code' in reason && typeof reason.Code === 'string' ? reason.Code : 'None',
  );
};

type SdkLike = Parameters<typeof isThrottlingError>[0];
const asSdkLike = (error: unknown): SdkLike | undefined => (typeof error === 'object' && error !== null ? (error as SdkLike) : undefined);

/** A batch call whose items DynamoDB kept leaving unprocessed (what it does when throttled): throttling, like the plain exceptions. */
export class UnprocessedBatch extends Error {
  override name = 'UnprocessedBatch';
}

export const classifyDependencyError = (error: unknown): DependencyFailure => {
  if (error instanceof UnprocessedBatch) return 'throttled';
  const name = errorName(error);
  if (name === 'TransactionConflictException') return 'conflict';
  if (name === 'TransactionCanceledException') {
    const codes = cancellationCodes(error);
    if (codes.some((code) => CONFLICT_REASONS.has(code))) return 'conflict';
    if (codes.some((code) => THROTTLE_REASONS.has(code))) return 'throttled';
    return 'refused';
  }
  const sdk = asSdkLike(error);
  if (!sdk) return 'refused';
  if (isThrottlingError(sdk)) return 'throttled';
  if (isTransientError(sdk) || isServerError(sdk) || name === 'InternalServerError' || name === 'ServiceUnavailable') return 'unavailable';
  return 'refused';
};

/** A failure that passes by itself: worth a retry by the client (503 with Retry-After), never a 500. */
export const isPassingDependencyFailure = (error: unknown): boolean => classifyDependencyError(error) !== 'refused';

/** A failure that a write path retries itself before answering 503: a conflict or throttling. */
export const isRetryableWriteFailure = (error: unknown): boolean => {
  const failure = classifyDependencyError(error);
  return failure === 'conflict' || failure === 'throttled';
};
