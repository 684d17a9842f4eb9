import { SendEmailCommand } from '@aws-sdk/client-ses';
import { requireEnv } from '#shared/config';
import { functionTable } from '#shared/db/client';
import { isRefused, type Key } from '#shared/db/entities/base';
import { writeNotificationOutcome } from '#shared/db/entities/notification';
import { cameFromService, errorName, httpStatusOf } from '#shared/errors';
import { logger } from '#shared/logger';
import { countMetric, METRIC } from '#shared/metrics';
import { isoNow } from '#shared/time';
import { MAIL_FROM, renewSesClient, ses } from './client';
import { type MailMessage, sendEmailInput } from './messages';
import { mailFailure, notificationOutcomeUpdate, type Outcome, type Settled } from './settle';

/** Where an invitation link points (the dashboard's invitation page). Read at init: fail fast. */
export const INVITE_LINK_BASE_URL = requireEnv('INVITE_LINK_BASE_URL');

/** A message that can never be sent as it is (its text is not well-formed Unicode). */
export class MalformedMessageError extends Error {
  override name = 'MalformedMessage';
}

const TEXT_FIELDS = ['to', 'replyTo', 'subject', 'text', 'html'] as const;

/** Sends one e-mail; text that is not well-formed Unicode is refused first, as the SDK would break the shared client on it. */
export const sendMail = async (message: MailMessage): Promise<void> => {
  const malformed = TEXT_FIELDS.find((field) => {
    const text = message[field];
    return typeof text === 'string' && !text.isWellFormed();
  });
  if (malformed) throw new MalformedMessageError(`the ${malformed} is not well-formed Unicode`);
  try {
    await ses.send(new SendEmailCommand(sendEmailInput(message, MAIL_FROM)));
  } catch (error) {
    if (!cameFromService(error) && ['URIError', 'TypeError', 'RangeError'].includes(errorName(error))) renewSesClient();
    throw error;
  }
};

/** What a notification's log lines name it by. */
type About = { notification: string; uuid: string };

/** A try's outcome as recorded, or `unsettled`: the record itself failed, so the e-mail is still owed as before. */
export type SettleResult = Settled | 'unsettled';

/** Records a try's outcome on the owing item; never throws (`unsettled`: the follow-up fails, so SQS delivers it again). */
const settleNotification = async (key: Key, outcome: Outcome, about: About, previousAttempts = 0): Promise<SettleResult> => {
  const { settled, update, ...rest } = notificationOutcomeUpdate(key, outcome, isoNow(), previousAttempts);
  try {
    await writeNotificationOutcome(functionTable, update);
  } catch (error) {
    if (isRefused(error)) return settled; // settled meanwhile (a resend)
    logger.warn('Could not record the notification outcome', { ...about, settled, error_name: errorName(error) });
    return 'unsettled';
  }
  if (settled === 'parked') {
    logger.error('Notification e-mail parked: it failed too often and is no longer retried (resend-notifications sends it)', {
      ...about,
      ...rest,
      notification_error: outcome.sent ? undefined : outcome.failure.reason,
    });
  }
  return settled;
};

/** Tries the e-mail an item owes and records the outcome on the item; never throws. An error building `message` counts as a failed try. */
export const tryNotification = async (
  key: Key,
  message: MailMessage | (() => MailMessage),
  about: About,
  previousAttempts = 0,
): Promise<SettleResult> => {
  let outcome: Outcome = { sent: true };
  try {
    await sendMail(typeof message === 'function' ? message() : message);
  } catch (error) {
    outcome = { sent: false, failure: mailFailure(error) };
    logger.error('Notification e-mail not sent; its follow-up retries it', {
      ...about,
      // Never the SES error's message, which can quote addresses.
      error_name: errorName(error) || 'Error',
      http_status: httpStatusOf(error),
      attempt: previousAttempts + 1,
      permanent: outcome.failure.permanent,
    });
  }
  countMetric(outcome.sent ? METRIC.emailsSent : METRIC.emailsFailed);
  return settleNotification(key, outcome, about, previousAttempts);
};

/** Sends the e-mail an item owes after its write committed; never throws (its follow-up retries a failure). True when SES took it. */
export const deliverNotification = async (key: Key, message: MailMessage, about: About): Promise<boolean> =>
  (await tryNotification(key, message, about)) === 'sent';
