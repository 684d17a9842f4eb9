import { functionTable } from '#shared/db/client';
import { affiliateCountChanges, getAffiliate } from '#shared/db/entities/affiliate';
import { decisionCountChanges, parseAffiliateRequest } from '#shared/db/entities/affiliate-request';
import { type Key, merchantIdOf } from '#shared/db/entities/base';
import { type CountChange, markCountsForRecount } from '#shared/db/entities/counter';
import { addToEmailProjection, inviteCountChange, parseInvite } from '#shared/db/entities/invite';
import { getMerchant } from '#shared/db/entities/merchant';
import { dropSettledNotification, getOwingItem } from '#shared/db/entities/notification';
import { type WorkKind, workDueOf, workPage } from '#shared/db/entities/owed-work';
import { errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { type MailMessage, notificationFor } from './messages';
import { INVITE_LINK_BASE_URL, tryNotification } from './send';

/** An owing item as stored: notificationFor parses it by its type. */
type OwedItem = Record<string, unknown>;

export type RelayResult = { sent: number; retry: number; parked: number; dropped: number; skipped: number; early: number };

const PAGE_SIZE = 25;

/** A follow-up may arrive this much before its e-mail's due time and still send it (clocks and delays are not exact). */
const DUE_SLACK_MS = 5_000;

/** The owing item's merchant is gone: a permanent failed try. */
class MerchantNotFound extends Error {
  override name = 'MerchantNotFound';
}

export type RelayOptions = {
  merchantId: string;
  /** Owed e-mails due less than this long ago are left to the request that owes them. */
  olderThanSeconds?: number;
  maxItems?: number;
  /** Epoch ms after which no new e-mail is started. */
  deadline?: number;
  includeParked?: boolean;
};

/** Sends one merchant's owed e-mails at once, each tried and settled on its own: `npm run admin -- resend-notifications`. */
export const relayPendingNotifications = async ({
  merchantId,
  olderThanSeconds = 60,
  maxItems = 250,
  deadline = Number.POSITIVE_INFINITY,
  includeParked = false,
}: RelayOptions): Promise<RelayResult> => {
  const merchantNames = new Map<string, string | undefined>();
  const result: RelayResult = { sent: 0, retry: 0, parked: 0, dropped: 0, skipped: 0, early: 0 };
  let seen = 0;
  const passes: [WorkKind, number][] = [
    ['NOTIFY', olderThanSeconds],
    ...(includeParked ? [['PARKED', 0] satisfies [WorkKind, number]] : []),
  ];
  for (const [kind, olderThan] of passes) {
    let startKey: Record<string, unknown> | undefined;
    do {
      if (Date.now() >= deadline) return result;
      const page = await workPage(functionTable, merchantId, kind, olderThan, PAGE_SIZE, startKey);
      for (const key of page.keys) {
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

/** The follow-up of an owed e-mail scheduled for `due`: sends it if still owed and due then. Never throws; `skipped`: try again. */
export const relayOwedNotification = (key: Key, due: string): Promise<keyof RelayResult> => relayOne(key, new Map(), due);

/** Tries one owed e-mail (a follow-up's only when still due at `scheduledFor`). Never throws: what cannot be read is skipped. */
const relayOne = async (key: Key, merchantNames: Map<string, string | undefined>, scheduledFor?: string): Promise<keyof RelayResult> => {
  let item: OwedItem | undefined;
  let merchantName: string | undefined;
  try {
    item = await getOwingItem(functionTable, key);
    const merchantId = merchantIdOf(key.pk);
    if (!merchantNames.has(merchantId)) merchantNames.set(merchantId, (await getMerchant(functionTable, merchantId))?.name);
    merchantName = merchantNames.get(merchantId);
  } catch (error) {
    logger.warn('Could not read an owed e-mail; it stays due for the next run', { sk: key.sk, error_name: errorName(error) });
    return 'skipped';
  }
  if (!item?.notification_pending_at) {
    // Nothing is owed any more (settled meanwhile): drop the entry.
    await dropSettledNotification(functionTable, key).catch((error: unknown) =>
      logger.warn('Could not drop a settled NOTIFY entry', { sk: key.sk, error_name: errorName(error) }),
    );
    return 'dropped';
  }
  const due = workDueOf(item);
  // A follow-up leaves an e-mail parked, rescheduled (the later write scheduled its own follow-up) or not yet due.
  const notNow = due !== undefined && (due !== scheduledFor || Date.parse(due) > Date.now() + DUE_SLACK_MS);
  if (scheduledFor !== undefined && (item.notification_parked_at !== undefined || notNow)) return 'early';
  const owed = item;
  const build = (): MailMessage => {
    if (!merchantName) throw new MerchantNotFound('the merchant of this item does not exist');
    const message = notificationFor(owed, merchantName, INVITE_LINK_BASE_URL);
    if (!message) throw new TypeError(`a ${String(owed.type)} item in this state owes no e-mail`);
    return message;
  };
  const previousAttempts = typeof owed.notification_attempts === 'number' ? owed.notification_attempts : 0;
  const about = { notification: 'relay', uuid: String(owed.uuid) };
  // What the request left unfinished is done first: an e-mail settled before it would leave it undone for good.
  if (previousAttempts <= 1 && !(await finishUnfinished(merchantIdOf(key.pk), owed))) return 'skipped';
  const settled = await tryNotification(key, build, about, previousAttempts);
  // Its outcome could not be recorded: still owed as before, so tried again like one that could not be read.
  return settled === 'unsettled' ? 'skipped' : settled;
};

/** Finishes what the request owing the e-mail may have left undone (recount marks, an invite's projection); false when a write failed. */
const finishUnfinished = async (merchantId: string, owed: OwedItem): Promise<boolean> => {
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
    return true;
  } catch (error) {
    logger.warn('Could not finish the follow-ups of an unfinished request; the e-mail waits for them', {
      sk: String(owed.sk),
      error_name: errorName(error),
    });
    return false;
  }
};
