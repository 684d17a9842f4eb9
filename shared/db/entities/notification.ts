import * as z from 'zod/mini';
import type { Key } from './base';
import { WORK_SET, workEntry, workSetValues } from './owed-work';

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

/** What the item of `key` carries when it owes an e-mail: the marker and its NOTIFY entry (owed-work.ts). */
export const owedNotification = (key: Key, now: string) => ({ notification_pending_at: now, ...workEntry(key, 'NOTIFY', now) });

/** The same, as update-expression parts (for an item that changes state by UpdateItem). */
export const owedNotificationUpdate = (key: Key, now: string) => ({
  set: `notification_pending_at = :owedAt, ${WORK_SET}`,
  values: { ':owedAt': now, ...workSetValues(key, 'NOTIFY', now) },
});
