import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, functionTable, TABLE_NAME } from '#shared/db/client';
import { affiliateCountChanges, getAffiliate } from '#shared/db/entities/affiliate';
import { decisionCountChanges, parseAffiliateRequest } from '#shared/db/entities/affiliate-request';
import { type Key, merchantIdOf } from '#shared/db/entities/base';
import { type CountChange, markCountsForRecount } from '#shared/db/entities/counter';
import { addToEmailProjection, inviteCountChange, parseInvite } from '#shared/db/entities/invite';
import { getMerchant } from '#shared/db/entities/merchant';
import { OUTBOX_REMOVE, type OutboxKind, outboxPage } from '#shared/db/entities/outbox';
import { errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { type MailMessage, notificationFor } from './messages';
import { INVITE_LINK_BASE_URL, tryNotification } from './send';

/** An owing item as stored: notificationFor parses it by its type. */
type OwedItem = Record<string, unknown>;

export type RelayResult = { sent: number; retry: number; parked: number; dropped: number; skipped: number };

const PAGE_SIZE = 25;

/** A failure of the owing item itself (its merchant is gone): counts as a permanent failed try. */
class MerchantNotFound extends Error {
  override name = 'MerchantNotFound';
}

export type RelayOptions = {
  /** Owed e-mails due less than this long ago are left to the request that owes them. */
  olderThanSeconds?: number;
  maxItems?: number;
  /** Epoch ms after which no new e-mail is started. */
  deadline?: number;
  /** Only this merchant's owed e-mails (the operator's resend-notifications). */
  merchantId?: string;
  /** Parked e-mails too (given up after too many failures): the operator's resend-notifications sends them again. */
  includeParked?: boolean;
};

/**
 * The notification relay: sends every e-mail an invite or affiliate request still owes because
 * SES failed when the request was answered. Owed e-mails are entries on the sparse outbox index
 * (`NOTIFY`, written with the state change); an entry's sort key is when it is due (owed since,
 * or its next retry), and entries due less than `olderThanSeconds` ago are left alone.
 *
 * Each e-mail is tried and settled on its own (settle.ts): a failure, even an exception, only
 * affects that e-mail, which is rescheduled with backoff or, after a bounded number of tries,
 * parked with its reason; the run goes on with the next one. Bounded by `maxItems` and by
 * `deadline` (epoch ms: the function's remaining time); what is left is due on the next run.
 *
 * The scheduled function (functions/notifications/relay.ts) and the operator's
 * `npm run admin -- resend-notifications` (one merchant, parked e-mails included) both run this.
 */
export const relayPendingNotifications = async ({
  olderThanSeconds = 60,
  maxItems = 250,
  deadline = Number.POSITIVE_INFINITY,
  merchantId,
  includeParked = false,
}: RelayOptions = {}): Promise<RelayResult> => {
  const merchantNames = new Map<string, string | undefined>();
  const result: RelayResult = { sent: 0, retry: 0, parked: 0, dropped: 0, skipped: 0 };
  let seen = 0;
  const passes: [OutboxKind, number][] = [
    ['NOTIFY', olderThanSeconds],
    ...(includeParked ? [['PARKED', 0] satisfies [OutboxKind, number]] : []),
  ];
  for (const [kind, olderThan] of passes) {
    let startKey: Record<string, unknown> | undefined;
    do {
      if (Date.now() >= deadline) return result;
      const page = await outboxPage(functionTable, kind, olderThan, PAGE_SIZE, startKey);
      for (const key of page.keys) {
        if (merchantId !== undefined && merchantIdOf(key.pk) !== merchantId) continue;
        if (seen >= maxItems || Date.now() >= deadline) return result;
        seen++;
        const outcome = await relayOne(key, merchantNames);
        result[outcome]++;
      }
      startKey = page.next;
    } while (startKey && seen < maxItems);
  }
  return result;
};

/** Tries one owed e-mail. Never throws: what cannot even be tried (a read failed) is skipped until the next run. */
const relayOne = async (key: Key, merchantNames: Map<string, string | undefined>): Promise<keyof RelayResult> => {
  let item: OwedItem | undefined;
  let merchantName: string | undefined;
  try {
    item = (await ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: true }))).Item;
    const merchantId = merchantIdOf(key.pk);
    if (!merchantNames.has(merchantId)) merchantNames.set(merchantId, (await getMerchant(functionTable, merchantId))?.name);
    merchantName = merchantNames.get(merchantId);
  } catch (error) {
    logger.warn('Could not read an owed e-mail; it stays due for the next run', { sk: key.sk, error_name: errorName(error) });
    return 'skipped';
  }
  if (!item?.notification_pending_at) {
    // Nothing is owed any more (settled meanwhile): drop the entry.
    await ddb
      .send(
        new UpdateCommand({
          TableName: TABLE_NAME,
          Key: key,
          UpdateExpression: `REMOVE ${OUTBOX_REMOVE}`,
          ConditionExpression: 'attribute_not_exists(notification_pending_at)',
        }),
      )
      .catch((error: unknown) => logger.warn('Could not drop a settled NOTIFY entry', { sk: key.sk, error_name: errorName(error) }));
    return 'dropped';
  }
  const owed = item;
  const build = (): MailMessage => {
    if (!merchantName) throw new MerchantNotFound('the merchant of this item does not exist');
    const message = notificationFor(owed, merchantName, INVITE_LINK_BASE_URL);
    if (!message) throw new TypeError(`a ${String(owed.type)} item in this state owes no e-mail`);
    return message;
  };
  const previousAttempts = typeof owed.notification_attempts === 'number' ? owed.notification_attempts : 0;
  const about = { notification: 'relay', uuid: String(owed.uuid) };
  if (previousAttempts <= 1) await finishUnfinished(merchantIdOf(key.pk), owed);
  return tryNotification(key, build, about, previousAttempts);
};

/**
 * An e-mail the relay sends first (or second) belongs to a request that did not finish: SES
 * failed, a follow-up write failed, or the function stopped after its commit. Which one is
 * unknown, so the blocks the write counted in are marked for an exact recount (count-repair.ts)
 * and an invite's address is put in the e-mail projection again (an idempotent SET). Never
 * throws: what fails is logged and the e-mail still goes out.
 */
const finishUnfinished = async (merchantId: string, owed: OwedItem) => {
  try {
    const changes: CountChange[] = [];
    if (owed.type === 'invite') {
      const invite = parseInvite(owed);
      changes.push(inviteCountChange(invite));
      await addToEmailProjection(functionTable, merchantId, [invite]);
    }
    if (owed.type === 'affiliate_request') {
      const request = parseAffiliateRequest(owed);
      changes.push(...decisionCountChanges(request));
      const affiliate =
        request.status === 'accepted' ? await getAffiliate(functionTable, merchantId, request.affiliate.slug, true) : undefined;
      if (affiliate) changes.push(...affiliateCountChanges(affiliate));
    }
    await markCountsForRecount(functionTable, merchantId, changes);
  } catch (error) {
    logger.warn('Could not finish the follow-ups of an unfinished request', { sk: String(owed.sk), error_name: errorName(error) });
  }
};
