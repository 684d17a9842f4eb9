import type { Key } from '#shared/db/entities/base';
import { WORK_REMOVE, WORK_SET, workSetValues } from '#shared/db/entities/owed-work';
import { asError, errorName, httpStatusOf } from '#shared/errors';

/**
 * What becomes of an owed e-mail after a try: retried on its merchant's NOTIFY entries with
 * back-off, or parked after MAX_PERMANENT_ATTEMPTS permanent or MAX_ATTEMPTS tries of any kind.
 * Pure; the API, the follow-ups and the admin CLI's resend all settle through
 * notificationOutcomeUpdate (docs/design-notes.md#affiliate-program, "One e-mail never holds up another").
 */
export const MAX_PERMANENT_ATTEMPTS = 3;
export const MAX_ATTEMPTS = 20;
const FIRST_RETRY_SECONDS = 60;
const MAX_RETRY_SECONDS = 3_600;

/** Seconds until the next try after `attempts` failed ones: 60, 120, 240, ... capped at 3600. */
export const retryDelaySeconds = (attempts: number) => Math.min(FIRST_RETRY_SECONDS * 2 ** Math.max(0, attempts - 1), MAX_RETRY_SECONDS);

/**
 * Failures that cannot change by trying again: the message could not be built or encoded in this
 * process (text that is not well-formed Unicode: MalformedMessage, or the SDK's URIError; an item
 * whose merchant is gone), or SES refused this message as such. Everything else (throttling,
 * timeouts, 5xx, network, account-level refusals) is transient.
 */
const LOCAL_ERRORS = ['MalformedMessage', 'MerchantNotFound', 'URIError', 'TypeError', 'RangeError', 'SyntaxError'];
const PERMANENT_ERRORS = new Set([...LOCAL_ERRORS, 'MessageRejected', 'InvalidParameterValue', 'ValidationError']);

export type MailFailure = { permanent: boolean; reason: string };

/**
 * The failure of one try, for the item and the logs. SES error messages can quote addresses, so
 * only the error's name and HTTP status are kept; a local error (no HTTP status) adds its message,
 * which names no address ("MalformedMessage: the text is not well-formed Unicode").
 */
export const mailFailure = (error: unknown): MailFailure => {
  const name = errorName(error) || 'Error';
  const status = httpStatusOf(error);
  const local = status === undefined && LOCAL_ERRORS.includes(name);
  const detail = status !== undefined ? ` (HTTP ${status})` : local ? `: ${asError(error).message.slice(0, 200)}` : '';
  return { permanent: PERMANENT_ERRORS.has(name), reason: `${name}${detail}` };
};

export type Outcome = { sent: true } | { sent: false; failure: MailFailure };
export type Settled = 'sent' | 'retry' | 'parked';

/** What a try's outcome amounts to, and the UpdateItem (without the table) that records it. */
export type SettleUpdate = {
  settled: Settled;
  attempts?: number;
  due?: string;
  update: { Key: Key; UpdateExpression: string; ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> };
};

/**
 * The UpdateItem that records a try's outcome on the owing item, and what it amounts to.
 * `previousAttempts` is the item's `notification_attempts` before this try (0 for a new debt).
 * Conditional on the debt still being there: a debt settled meanwhile is left alone.
 */
export const notificationOutcomeUpdate = (key: Key, outcome: Outcome, now: string, previousAttempts = 0): SettleUpdate => {
  const condition = 'attribute_exists(pk) AND attribute_exists(notification_pending_at)';
  if (outcome.sent) {
    return {
      settled: 'sent',
      update: {
        Key: key,
        UpdateExpression: `SET notified_at = :now REMOVE notification_pending_at, notification_failed_at, notification_error, notification_attempts, notification_parked_at, ${WORK_REMOVE}`,
        ConditionExpression: condition,
        ExpressionAttributeValues: { ':now': now },
      },
    };
  }
  const attempts = previousAttempts + 1;
  const park = attempts >= MAX_ATTEMPTS || (outcome.failure.permanent && attempts >= MAX_PERMANENT_ATTEMPTS);
  const failed = { ':now': now, ':error': outcome.failure.reason, ':attempts': attempts };
  if (park) {
    return {
      settled: 'parked',
      attempts,
      update: {
        Key: key,
        UpdateExpression: `SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts, notification_parked_at = :now, ${WORK_SET}`,
        ConditionExpression: condition,
        ExpressionAttributeValues: { ...failed, ...workSetValues(key, 'PARKED', now) },
      },
    };
  }
  const delaySeconds = outcome.failure.permanent ? 0 : retryDelaySeconds(attempts);
  const due = new Date(Date.parse(now) + delaySeconds * 1000).toISOString();
  return {
    settled: 'retry',
    attempts,
    update: {
      Key: key,
      UpdateExpression: `SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts, ${WORK_SET} REMOVE notification_parked_at`,
      ConditionExpression: condition,
      ExpressionAttributeValues: { ...failed, ...workSetValues(key, 'NOTIFY', due) },
    },
  };
};
