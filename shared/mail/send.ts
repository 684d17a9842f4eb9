import { SendEmailCommand } from '@aws-sdk/client-ses';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { requireEnv } from '../config';
import { ddb, TABLE_NAME } from '../db/client';
import type { Key } from '../db/entities/base';
import { notificationSettledUpdate } from '../db/entities/notification';
import { logger } from '../logger';
import { isoNow } from '../time';
import { MAIL_FROM, ses } from './client';
import { invitationLink, sendEmailInput, type MailMessage } from './messages';

/** Where an invitation link points (the dashboard's invitation page). Read at init: fail fast. */
export const INVITE_LINK_BASE_URL = requireEnv('INVITE_LINK_BASE_URL');

export const inviteLink = (inviteUuid: string) => invitationLink(INVITE_LINK_BASE_URL, inviteUuid);

export const sendMail = async (message: MailMessage): Promise<void> => {
  await ses.send(new SendEmailCommand(sendEmailInput(message, MAIL_FROM)));
};

/** What a log line may say about an SES failure: never its message, which can quote addresses. */
export const mailErrorSummary = (error: unknown) => ({
  error_name: (error as Error | undefined)?.name ?? 'Error',
  http_status: (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode,
});

/**
 * Sends the e-mail an item owes, AFTER the write that made it owe it (and set its
 * `notification_pending_at`) has committed. Never throws: the state change is done and the API
 * reports it; a failed send is logged (trace id, item uuid; no address) and recorded as
 * `notification_failed_at`, and the pending mark stays for `npm run admin -- resend-notifications`.
 * Returns whether SES took the message.
 */
export const deliverNotification = async (key: Key, message: MailMessage, about: { notification: string; uuid: string }): Promise<boolean> => {
  let outcome: 'sent' | 'failed' = 'sent';
  try {
    await sendMail(message);
  } catch (error) {
    outcome = 'failed';
    logger.error('Notification e-mail not sent; it stays pending for resend-notifications', { ...about, ...mailErrorSummary(error) });
  }
  try {
    await ddb.send(new UpdateCommand({ TableName: TABLE_NAME, ...notificationSettledUpdate(key, outcome, isoNow()) }));
  } catch (error) {
    // The e-mail went (or did not); only the bookkeeping failed. Worst case a resend repeats it.
    logger.warn('Could not record the notification outcome', { ...about, outcome, error_name: (error as Error).name });
  }
  return outcome === 'sent';
};
