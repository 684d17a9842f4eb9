import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, functionTable, TABLE_NAME } from '../db/client';
import { merchantIdOf } from '../db/entities/base';
import { getMerchant } from '../db/entities/merchant';
import { clearOutboxEntry, outboxEntries } from '../db/entities/outbox';
import { notificationFor } from './messages';
import { deliverNotification, INVITE_LINK_BASE_URL } from './send';

/**
 * The notification relay: sends every e-mail an invite or affiliate request still owes because
 * SES failed when the request was answered. Owed e-mails are entries on the sparse outbox index
 * (`NOTIFY`, written with the state change, see owedNotification); entries younger than
 * `olderThanSeconds` are left to the request's own send. A send that fails again moves its entry
 * to now, so it is retried after the minimum age. Bounded per run; returns what it did.
 */
export const relayPendingNotifications = async ({ olderThanSeconds = 60, maxBatches = 10 } = {}) => {
  const merchantNames = new Map<string, string | undefined>();
  const result = { sent: 0, failed: 0 };
  for (let batch = 0; batch < maxBatches; batch++) {
    const pending = await outboxEntries(functionTable, 'NOTIFY', olderThanSeconds, 25);
    if (pending.length === 0) break;
    for (const key of pending) {
      const { Item } = await ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: true }));
      const merchantId = merchantIdOf(key.pk);
      if (!merchantNames.has(merchantId)) merchantNames.set(merchantId, (await getMerchant(functionTable, merchantId))?.name);
      const merchantName = merchantNames.get(merchantId);
      const message = Item?.notification_pending_at && merchantName ? notificationFor(Item, merchantName, INVITE_LINK_BASE_URL) : undefined;
      if (!message) {
        // Nothing is owed any more (settled meanwhile, or not a mailable item): drop the entry.
        await clearOutboxEntry(functionTable, key);
        continue;
      }
      const sent = await deliverNotification(key, message, { notification: 'relay', uuid: String(Item?.uuid) });
      if (sent) result.sent++;
      else result.failed++;
    }
    if (result.failed > 0) break; // SES is refusing: the next run tries again
  }
  return result;
};
