import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import * as z from 'zod/mini';
import type { Stage } from '#shared/config';
import { getAffiliate, tierBucket } from '#shared/db/entities/affiliate';
import { affiliateRequestList, affiliateRequestRecord, requestCountChange } from '#shared/db/entities/affiliate-request';
import { putNew } from '#shared/db/entities/base';
import { getCommissionLedger } from '#shared/db/entities/commission';
import { recountMerchant } from '#shared/db/entities/count-repair';
import { applyCountChanges, takeSequence } from '#shared/db/entities/counter';
import { getInvite, markInviteLinkUsed } from '#shared/db/entities/invite';
import { getMerchant } from '#shared/db/entities/merchant';
import { getOrder, linkOrderPayment } from '#shared/db/entities/order';
import { allTiers } from '#shared/db/entities/tier';
import { findToken, revokeTokenRecord, tokenRecord } from '#shared/db/entities/token';
import { readPage } from '#shared/db/pages';
import { pick, toAffiliateRequestResponse, toInviteResponse } from '#shared/domain/program-model';
import { errorName } from '#shared/errors';
import type { relayPendingNotifications } from '#shared/mail/relay';
import { isoNow } from '#shared/time';
import { hashToken, kindOfToken, type TokenKind, tokenKindOfStage } from '#shared/tokens';
import type { Store } from './store';

/** What the dashboard and the payment side do outside this API, as `npm run admin` commands; a refusal is an AdminError of one line. */
export class AdminError extends Error {
  override name = 'AdminError';
}

export const requireMerchant = async (store: Store, merchantId: string) => {
  const merchant = await getMerchant(store, merchantId, true);
  if (!merchant) throw new AdminError(`merchant ${merchantId} does not exist in table ${store.table}`);
  return merchant;
};

/** Mints a token for a merchant; the token string is returned once and only its hash is stored. */
export const mintToken = async (
  store: Store,
  stage: Stage,
  options: { merchantId: string; kind?: TokenKind; canPlaceLiveOrders?: boolean; label?: string },
) => {
  await requireMerchant(store, options.merchantId);
  const kind = options.kind ?? tokenKindOfStage(stage);
  const { value, item } = tokenRecord(options.merchantId, {
    kind,
    can_place_live_orders: options.canPlaceLiveOrders ?? true,
    label: options.label ?? 'admin',
  });
  await putNew(store, item);
  return { merchant_id: options.merchantId, token: value, kind, can_place_live_orders: item.can_place_live_orders };
};

/** Marks a token revoked; auth refuses it from then on (within the auth cache TTL). Revoking twice keeps the first revoked_at. */
export const revokeToken = async (store: Store, token: string) => {
  if (!kindOfToken(token)) throw new AdminError('not a token: expected live_... or test_...');
  const hash = hashToken(token);
  const record = await findToken(store, hash);
  if (!record) throw new AdminError(`token not found in table ${store.table}`);
  const revokedAt = await revokeTokenRecord(store, record.merchant_id, hash);
  return { merchant_id: record.merchant_id, revoked_at: revokedAt, already_revoked: record.revoked_at !== undefined };
};

const SLUG = /^[a-z0-9][a-z0-9_-]*$/;
const applicant = z.object({
  slug: z.string().check(z.maxLength(255), z.regex(SLUG, 'slug: lowercase letters, digits, "-" and "_" only')),
  name: z.string().check(z.minLength(1, 'name must not be empty'), z.maxLength(255)),
  email: z.email('email is not a valid e-mail address').check(z.maxLength(255)),
});

/** An affiliate applies: a pending request, unless the slug is active or pending (read, then write: the API's accept holds regardless). */
export const applyForProgram = async (store: Store, options: { merchantId: string; slug: string; name: string; email: string }) => {
  const parsed = z.safeParse(applicant, { slug: options.slug.toLowerCase(), name: options.name, email: options.email });
  if (!parsed.success) throw new AdminError(parsed.error.issues.map((issue) => issue.message).join('; '));
  const { slug, name, email } = parsed.data;
  await requireMerchant(store, options.merchantId);
  const affiliate = await getAffiliate(store, options.merchantId, slug, true);
  if (affiliate?.status === 'active') throw new AdminError(`${slug} is already an active affiliate of merchant ${options.merchantId}`);
  const pending = await pendingRequestOf(store, options.merchantId, slug);
  if (pending) throw new AdminError(`${slug} already has a pending request (${pending})`);
  const item = affiliateRequestRecord(options.merchantId, {
    seq: await takeSequence(store, options.merchantId, 'affiliate_requests'),
    status: 'pending',
    affiliate: { slug, name, email },
  });
  await putNew(store, item);
  await applyCountChanges(store, options.merchantId, [requestCountChange(item, 'pending', 1)]);
  return { merchant_id: options.merchantId, affiliate_request: toAffiliateRequestResponse(item) };
};

/** The uuid of the slug's pending request, if any: the pending list read page by page (the API never does this). */
const pendingRequestOf = async (store: Store, merchantId: string, slug: string): Promise<string | undefined> => {
  for (let page = 1; ; page++) {
    const { items } = await readPage(store, affiliateRequestList(merchantId, ['pending']), { page, per_page: 100 });
    const match = items.find((request) => request.affiliate.slug === slug);
    if (match) return match.uuid;
    if (items.length < 100) return undefined;
  }
};

/** The invitee used the invitation link: link_used_at is set once; marking again changes nothing. */
export const markInviteUsed = async (store: Store, options: { merchantId: string; inviteUuid: string }) => {
  const marked = await markInviteLinkUsed(store, options.merchantId, options.inviteUuid, isoNow());
  if (marked) return { merchant_id: options.merchantId, invite: toInviteResponse(marked), already_used: false };
  const invite = await getInvite(store, options.merchantId, options.inviteUuid, true);
  if (!invite) throw new AdminError(`invite ${options.inviteUuid} not found for merchant ${options.merchantId}`);
  return { merchant_id: options.merchantId, invite: toInviteResponse(invite), already_used: true };
};

/** Links an order to a payment, after which it cannot be cancelled; linking again to the same payment is a no-op. */
export const linkPayment = async (store: Store, options: { merchantId: string; orderUuid: string; paymentId: string }) => {
  const linked = await linkOrderPayment(store, options.merchantId, options.orderUuid, options.paymentId, isoNow());
  if (linked)
    return { merchant_id: options.merchantId, order: { uuid: linked.uuid, order_no: linked.order_no, payment_id: options.paymentId } };
  const order = await getOrder(store, options.merchantId, options.orderUuid, true);
  if (!order) throw new AdminError(`order ${options.orderUuid} not found for merchant ${options.merchantId}`);
  if (order.cancelled_at) throw new AdminError(`order ${options.orderUuid} is cancelled and cannot be linked to a payment`);
  throw new AdminError(`order ${options.orderUuid} is already linked to another payment`);
};

/** The commission ledger of one order, as the `commission` command prints it. */
export const commissionOfOrder = async (store: Store, options: { merchantId: string; orderUuid: string }) => {
  const { ledger } = await getCommissionLedger(store, options.merchantId, options.orderUuid, true);
  if (!ledger)
    throw new AdminError(`no commission ledger for order ${options.orderUuid} of merchant ${options.merchantId} in table ${store.table}`);
  return {
    ...pick(ledger, ['order_uuid', 'status', 'net_amount', 'currency_code']),
    entries: ledger.entries.map((entry) => pick(entry, ['type', 'amount', 'at'])),
  };
};

/** Sends one merchant's owed e-mails, parked ones too, older than `olderThanSeconds` (so a send in flight is not doubled). */
export const resendNotifications = async (
  store: Store,
  relay: typeof relayPendingNotifications,
  options: { merchantId: string; olderThanSeconds: number },
) => {
  await requireMerchant(store, options.merchantId);
  const result = await relay({ ...options, includeParked: true, maxItems: 1000 });
  return { merchant_id: options.merchantId, sent: result.sent, failed: result.retry + result.parked };
};

/** What an SQS endpoint without message-move tasks (the fauxqs emulator) answers StartMessageMoveTask with. */
const isUnsupportedAction = (error: unknown) =>
  ['InvalidAction', 'UnsupportedOperation', 'UnknownOperationException'].includes(errorName(error));

/** Moves the orders DLQ's messages back: a message-move task, or by hand where there is none (docs/operations.md#a-message-in-the-dlq). */
export const redriveDeadLetters = async ({ sqs, dlqUrl, ordersQueueUrl }: { sqs: SQSClient; dlqUrl: string; ordersQueueUrl: string }) => {
  const attributes = async (queueUrl: string) =>
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn', 'ApproximateNumberOfMessages'] })))
      .Attributes ?? {};
  const [dlq, orders] = await Promise.all([attributes(dlqUrl), attributes(ordersQueueUrl)]);
  if (!dlq.QueueArn || !orders.QueueArn) throw new AdminError('SQS did not return the queue ARNs');
  try {
    const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlq.QueueArn, DestinationArn: orders.QueueArn }));
    return { method: 'message-move-task' as const, task_handle: TaskHandle, messages_in_dlq: Number(dlq.ApproximateNumberOfMessages ?? 0) };
  } catch (error) {
    if (!isUnsupportedAction(error)) throw error;
  }
  let moved = 0;
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 30,
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) break;
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: ordersQueueUrl,
        Entries: Messages.map(({ Body, MessageAttributes }, index) => ({ Id: String(index), MessageBody: Body ?? '', MessageAttributes })),
      }),
    );
    const ok = new Set((sent.Successful ?? []).map((entry) => entry.Id));
    const done = Messages.flatMap(({ ReceiptHandle }, index) => (ok.has(String(index)) ? [{ Id: String(index), ReceiptHandle }] : []));
    if (done.length > 0) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: dlqUrl, Entries: done }));
    moved += done.length;
    if (done.length < Messages.length)
      throw new AdminError(
        `moved ${moved} message(s); ${Messages.length - done.length} could not be sent to the orders queue and stay in the DLQ`,
      );
  }
  return { method: 'receive-send-delete' as const, moved };
};

/** Recounts every block count of a merchant's lists from the list indexes: the repair for a count that was neither kept nor marked. */
export const recountLists = async (store: Store, merchantId: string) => {
  await requireMerchant(store, merchantId);
  const buckets = (await allTiers(store, merchantId)).map((tier) => tierBucket(tier.slug));
  const { recounts, marked } = await recountMerchant(store, merchantId, buckets);
  return {
    merchant_id: merchantId,
    blocks_checked: recounts.length,
    corrected: recounts.filter(({ before, after }) => before !== after),
    // Changed in the last seconds: marked, and recounted by the change feed's follow-up.
    marked_for_later: marked,
  };
};
