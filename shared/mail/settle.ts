import type { Key } from '#shared/db/entities/base';
import { WORK_REMOVE, WORK_SET, workSetValues } from '#shared/db/entities/owed-work';
import { asError, errorName, httpStatusOf } from '#shared/errors';

/** An owed e-mail is parked after this many permanent failures, or tries of any kind (docs/design-notes.md#affiliate-program). */
export const MAX_PERMANENT_ATTEMPTS = 3;
export const MAX_ATTEMPTS = 20;
const FIRST_RETRY_SECONDS = 60;
const MAX_RETRY_SECONDS = 3_600;

/** Seconds until the next try after `attempts` failed ones: 60, 120, 240, ... capped at 3600. */
export const retryDelaySeconds = (attempts: number) => Math.min(FIRST_RETRY_SECONDS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_SECONDS);

/** Failures trying again cannot change (built or encoded here, or SES refused this message); all others are transient. */
const LOCAL_ERRORS = ['MalformedMessage', 'MerchantNotFound', 'URIError', 'TypeError', 'RangeError', 'SyntaxError'];
const PERMANENT_ERRORS = new Set([...LOCAL_ERRORS, 'MessageRejected', 'InvalidParameterValue', 'ValidationError']);

/** One try's failure: the error's name and HTTP status (SES messages can quote addresses), a local error's message too. */
export const mailFailure = (error: unknown): { permanent: boolean; reason: string } => {
  const name = errorName(error) || 'Error';
  const status = httpStatusOf(error);
  const local = status === undefined && LOCAL_ERRORS.includes(name);
  const detail = status !== undefined ? ` (HTTP ${status})` : local ? `: ${asError(error).message.slice(0, 200)}` : '';
  return { permanent: PERMANENT_ERRORS.has(name), reason: `${name}${detail}` };
};

export type Outcome = { sent: true } | { sent: false; failure: ReturnType<typeof mailFailure> };
export type Settled = 'sent' | 'retry' | 'parked';

/** The UpdateItem (without the table) that records a try's outcome on the owing item, and what it amounts to. */
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
