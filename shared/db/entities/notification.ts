import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import { getStored, type Key, updateItem } from './base';
import { WORK_REMOVE, WORK_SET, workEntry, workSetValues } from './owed-work';

/** The e-mail an invite or affiliate request owes, set in the same write as its state change; cleared once SES took it. */
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

/** The item that owes an e-mail, read consistently; undefined when it is gone. */
export const getOwingItem = (db: TableRef, key: Key) => getStored(db, 'owing item', z.looseObject({}), key, true);

/** Records a try's outcome on the owing item: the UpdateItem mail/settle.ts built (conditional on the debt still being there). */
export const writeNotificationOutcome = updateItem;

/** Takes the NOTIFY entry off an item that no longer owes an e-mail (settled meanwhile); refused if it owes one again. */
export const dropSettledNotification = (db: TableRef, key: Key) =>
  updateItem(db, {
    Key: key,
    UpdateExpression: `REMOVE ${WORK_REMOVE}`,
    ConditionExpression: 'attribute_not_exists(notification_pending_at)',
  });
