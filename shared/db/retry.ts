import { busy, errorName } from '#shared/errors';

/**
 * The one conflict/back-off helper of every write path (create, cancel, update, invite, accept,
 * decline). In DynamoDB two transactions touching one item at the same time cancel each other
 * (TransactionConflict), and a single-item write that meets a running transaction on its item gets
 * TransactionConflictException. Neither is the client's fault and both pass: retry with full-jitter
 * exponential back-off, and past the budget answer 503 with Retry-After (never a 500).
 * DynamoDB Local never produces these: the unit tests do, with aws-sdk-client-mock.
 */
export const isTransactionConflict = (error: unknown): boolean => {
  const name = errorName(error);
  if (name === 'TransactionConflictException') return true;
  const reasons =
    typeof error === 'object' && error !== null && 'CancellationReasons' in error && Array.isArray(error.CancellationReasons)
      ? error.CancellationReasons
      : [];
  return (
    name === 'TransactionCanceledException' &&
    reasons.some((reason) => typeof reason === 'object' && reason !== null && reason.Code === 'TransactionConflict')
  );
};

export const WRITE_ATTEMPTS = 6;
const BASE_DELAY_MS = 10;
const MAX_DELAY_MS = 320;

const backOff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt)));

export const withConflictRetry = async <T>(write: () => Promise<T>, attempts = WRITE_ATTEMPTS): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!isTransactionConflict(error)) throw error;
      if (attempt >= attempts) throw busy();
      await backOff(attempt);
    }
  }
};
