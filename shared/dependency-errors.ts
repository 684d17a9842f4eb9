import { isServerError, isThrottlingError, isTransientError } from '@smithy/core/retry';
import { errorName } from '#shared/errors';

/** What a dependency threw, classified once (docs/correctness.md#one-classification-of-dependency-errors). */
export type DependencyFailure = 'conflict' | 'throttled' | 'unavailable' | 'refused';

/** Cancellation reason codes DynamoDB gives a part of a cancelled transaction it throttled. */
const THROTTLE_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

const cancellationCodes = (error: unknown): string[] => {
  if (typeof error !== 'object' || error === null || !('CancellationReasons' in error) || !Array.isArray(error.CancellationReasons))
    return [];
  return error.CancellationReasons.map((reason: unknown) =>
    typeof reason === 'object' && reason !== null && 'Code' in reason && typeof reason.Code === 'string' ? reason.Code : 'None',
  );
};

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
    if (codes.includes('TransactionConflict')) return 'conflict';
    if (codes.some((code) => THROTTLE_REASONS.has(code))) return 'throttled';
    return 'refused';
  }
  if (typeof error !== 'object' || error === null) return 'refused';
  const sdk = error as Parameters<typeof isThrottlingError>[0];
  if (isThrottlingError(sdk)) return 'throttled';
  if (isTransientError(sdk) || isServerError(sdk) || name === 'InternalServerError' || name === 'ServiceUnavailable') return 'unavailable';
  return 'refused';
};

/** A failure that passes by itself: worth a retry by the client (503 with Retry-After), never a 500. */
export const isPassingDependencyFailure = (error: unknown): boolean => classifyDependencyError(error) !== 'refused';

/** A failure that a write path retries itself before answering 503: a conflict or throttling. */
export const isRetryableWriteFailure = (error: unknown): boolean => ['conflict', 'throttled'].includes(classifyDependencyError(error));
