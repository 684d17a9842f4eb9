import type { Key } from '#shared/db/entities/base';
import { WORK_REMOVE, WORK_SET, workSetValues } from '#shared/db/entities/owed-work';
import { asError, errorName, httpStatusOf } from '#shared/errors';

/**
 * What becomes of an owed e-mail after a try: retried with back-off, or parked after MAX_PERMANENT_ATTEMPTS
 * permanent or MAX_ATTEMPTS tries of any kind (docs/design-notes.md#affiliate-program).
 */
export const MAX_PERMANENT_ATTEMPTS = 3;
export const MAX_ATTEMPTS = 20;
const FIRST_RETRY_SECONDS = 60;
const MAX_RETRY_SECONDS = 3_600;

/** Seconds until the next try after `attempts` failed ones: 60, 120, 240, ... capped at 3600. */
export const retryDelaySeconds = (attempts: number) => Math.min(FIRST_RETRY_SECONDS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_SECONDS);

/**
 * Failures that cannot change by trying again: the message could not be built or encoded here, or SES refused
 * this message as such. Everything else (throttling, timeouts, 5xx, network, account-level refusals) is transient.
 */
const LOCAL_ERRORS = ['MalformedMessage', 'MerchantNotFound', 'URIError', 'TypeError', 'RangeError', 'SyntaxError'];
const PERMANENT_ERRORS = new Set([...LOCAL_ERRORS, 'MessageRejected', 'InvalidParameterValue', 'ValidationError']);

/**
 * The failure of one try, for the item and the logs: the error's name and HTTP status, as SES messages can
 * quote addresses; a local error adds its own message, which names none.
 */
export const mailFailure = (error: unknown): { permanent: boolean; reason: string } => {
  const name = errorName(error) || 'Error';
  const status = httpStatusOf(error);
  const local = status === undefined && LOCAL_ERRORS.includes(name);
  const detail = status !== undefined ? ` (HTTP ${status})` : local ? `: ${asError(error).message.slice(0, 200)}` : '';
  return { permanent: PERMANENT_ERRORS.has(name), reason: `${name}${detail}` };
};

export type Outcome = { sent: true } | { sent: false; failure: ReturnType<typeof mailFailure> };
export type Settled = 'sent' | 'retry' | 'parked';

/**
 * The UpdateItem (without the table) that records a try's outcome on the owing item, and what it amounts to;
 * `previousAttempts` is the item's `notification_attempts` before this try. A debt settled meanwhile is left alone.
 */
export const notificationOutcomeUpdate = (key: Key, outcome: Outcome, now: string, previousAttempts = 0) => {
  const update = (UpdateExpression: string, ExpressionAttributeValues: Record<string, unknown>) => ({
    Key: key,
    UpdateExpression,
    ConditionExpression: 'attribute_exists(pk) AND attribute_exists(notification_pending_at)',
    ExpressionAttributeValues,
  });
  if (outcome.sent) {
    const cleared = 'notification_pending_at, notification_failed_at, notification_error, notification_attempts, notification_parked_at';
    return { settled: 'sent' as const, update: update(`SET notified_at = :now REMOVE ${cleared}, ${WORK_REMOVE}`, { ':now': now }) };
  }
  const attempts = previousAttempts + 1;
  const failed = { ':now': now, ':error': outcome.failure.reason, ':attempts': attempts };
  const recorded = 'SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts';
  if (attempts >= MAX_ATTEMPTS || (outcome.failure.permanent && attempts >= MAX_PERMANENT_ATTEMPTS)) {
    const values = { ...failed, ...workSetValues(key, 'PARKED', now) };
    return { settled: 'parked' as const, attempts, update: update(`${recorded}, notification_parked_at = :now, ${WORK_SET}`, values) };
  }
  const delaySeconds = outcome.failure.permanent ? 0 : retryDelaySeconds(attempts);
  const due = new Date(Date.parse(now) + delaySeconds * 1000).toISOString();
  const values = { ...failed, ...workSetValues(key, 'NOTIFY', due) };
  return { settled: 'retry' as const, attempts, update: update(`${recorded}, ${WORK_SET} REMOVE notification_parked_at`, values) };
};
