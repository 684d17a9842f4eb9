import * as z from 'zod/mini';
import { OUTBOX_REMOVE, OUTBOX_RESCHEDULE, OUTBOX_SET, outboxEntry, outboxSetValues } from './outbox';
import type { Key } from './base';

/**
 * The e-mail an item owes its recipient (invitation, accept/decline notice), kept on the item that
 * owes it (invite, affiliate request). Set in the same write as the state change, so the debt is
 * durable; cleared once SES took the message.
 */
export const notificationState = {
  notification_pending_at: z.optional(z.string()),
  notification_failed_at: z.optional(z.string()),
  notified_at: z.optional(z.string()),
};

/** What an item that owes an e-mail carries: the marker and its NOTIFY outbox entry. */
export const owedNotification = (now: string) => ({ notification_pending_at: now, ...outboxEntry('NOTIFY', now) });

/** The same, as update-expression parts (for an item that changes state by UpdateItem). */
export const owedNotificationUpdate = (now: string) => ({
  set: `notification_pending_at = :owedAt, ${OUTBOX_SET}`,
  values: { ':owedAt': now, ...outboxSetValues('NOTIFY', now) },
});

/**
 * The update that settles an owed e-mail: sent clears the debt and its outbox entry; failed records
 * when it failed and moves the entry to now, so the notification relay tries again after its
 * minimum age. Shared by the API, the relay and the admin CLI.
 */
export const notificationSettledUpdate = (key: Key, outcome: 'sent' | 'failed', now: string) => ({
  Key: key,
  UpdateExpression:
    outcome === 'sent'
      ? `SET notified_at = :now REMOVE notification_pending_at, notification_failed_at, ${OUTBOX_REMOVE}`
      : `SET notification_failed_at = :now, ${OUTBOX_RESCHEDULE.replace(':outboxSince', ':now')}`,
  ConditionExpression: 'attribute_exists(pk)',
  ExpressionAttributeValues: { ':now': now },
});
