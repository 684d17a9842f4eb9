import { isPassingDependencyFailure, isRetryableWriteFailure } from '#shared/dependency-errors';
import { busy } from '#shared/errors';

/** The back-off of every write path: past it a 503, never a 500 (docs/correctness.md#one-classification-of-dependency-errors). */
export const WRITE_ATTEMPTS = 6;
const BASE_DELAY_MS = 10;
const MAX_DELAY_MS = 320;

export const backOff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt)));

/** `write` again while `retryable` says so, at most `attempts` times; then what `exhausted` makes of the last error. */
const retrying = async <T>(
  write: () => Promise<T>,
  retryable: (error: unknown) => boolean,
  attempts: number,
  exhausted: (error: unknown) => unknown,
): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!retryable(error)) throw error;
      if (attempt >= attempts) throw exhausted(error);
      await backOff(attempt);
    }
  }
};

export const withWriteRetry = <T>(write: () => Promise<T>) => retrying(write, isRetryableWriteFailure, WRITE_ATTEMPTS, () => busy());

/** For writes safe to repeat (the change feed's): any passing failure is tried again, not the whole stream batch. */
export const withRepeatableRetry = <T>(write: () => Promise<T>) => retrying(write, isPassingDependencyFailure, 4, (error) => error);
