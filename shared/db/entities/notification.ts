import * as z from 'zod/mini';
import { OUTBOX_SET, outboxEntry, outboxSetValues } from './outbox';

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
