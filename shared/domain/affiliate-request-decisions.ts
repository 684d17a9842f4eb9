import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, TABLE_NAME } from '../db/client';
import { keys } from '../db/keys';
import type { Merchant } from '../db/merchants';
import { notFound, ruleRefused } from '../http/errors';
import { requestDecisionMessage } from '../mail/messages';
import { deliverNotification } from '../mail/send';
import { isoNow } from '../time';
import { readRequest } from './affiliate-requests';
import { findAffiliate } from './affiliates';
import { affiliateOnAccept, owedNotification, type AffiliateOnAccept, type AffiliateRequestItem, type AffiliateRequestStatus } from './program-model';
import { backOff, isTransactionConflict, MAX_WRITE_ATTEMPTS } from './program-store';

export { toAcceptedRequestResponse, toAffiliateRequestResponse } from './program-model';

/** Accepting or declining a request that is no longer pending: 422 with errors.message. */
export const REQUEST_MESSAGES = {
  alreadyAccepted: 'The affiliate request has already been accepted.',
  alreadyDeclined: 'The affiliate request has already been declined.',
} as const;

const notPending = (status: AffiliateRequestStatus) =>
  ruleRefused(status === 'accepted' ? REQUEST_MESSAGES.alreadyAccepted : REQUEST_MESSAGES.alreadyDeclined);

/**
 * The request's own transition, conditional on it still being pending, so that of a concurrent
 * accept and decline exactly one commits. It also records the e-mail the decision owes.
 */
const decisionUpdate = (merchantId: string, uuid: string, decision: 'accepted' | 'declined', now: string) => {
  const owed = owedNotification(now);
  return {
    TableName: TABLE_NAME,
    Key: keys.affiliateRequest(merchantId, uuid),
    UpdateExpression:
      'SET #status = :decision, decided_at = :now, updated_at = :now, notification_pending_at = :owed, gsi2pk = :outbox, gsi2sk = :owed',
    ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':decision': decision, ':now': now, ':pending': 'pending', ':owed': owed.notification_pending_at, ':outbox': owed.gsi2pk },
  };
};

/** The affiliate half of an accept, each kind conditional on the affiliate being as it was read. */
const affiliateWrite = (merchantId: string, slug: string, change: AffiliateOnAccept) => {
  switch (change.kind) {
    case 'create':
      return { Put: { TableName: TABLE_NAME, Item: change.item, ConditionExpression: 'attribute_not_exists(pk)' } };
    case 'reactivate':
      return {
        Put: {
          TableName: TABLE_NAME,
          Item: change.item,
          ConditionExpression: '#status <> :active AND updated_at = :seen',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':active': 'active', ':seen': change.seenUpdatedAt },
        },
      };
    case 'unchanged':
      return {
        ConditionCheck: {
          TableName: TABLE_NAME,
          Key: keys.affiliate(merchantId, slug),
          ConditionExpression: '#status = :active',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':active': 'active' },
        },
      };
  }
};

const notify = (merchant: Merchant, request: AffiliateRequestItem) =>
  deliverNotification(keys.affiliateRequest(merchant.id, request.uuid), requestDecisionMessage(request, merchant.name), {
    notification: `affiliate_request_${request.status}`,
    uuid: request.uuid,
  });

/**
 * Accepts a pending request: ONE transaction moves the request to `accepted` and makes the
 * affiliate of its slug an active affiliate of the merchant (see affiliateOnAccept), so orders can
 * be attributed to it the moment the API answers. Reads first (request, then affiliate: two
 * consistent GetItems) because the affiliate item is built from the request; every write is
 * conditional on what was read, and a lost race re-reads: a request that stopped being pending is
 * a 422, one that vanished a 404. Then the affiliate is e-mailed (never undoing the accept).
 */
export const acceptAffiliateRequest = async (merchant: Merchant, uuid: string): Promise<AffiliateRequestItem> => {
  for (let attempt = 1; ; attempt++) {
    const request = await readRequest(merchant.id, uuid, true);
    if (!request) throw notFound();
    if (request.status !== 'pending') throw notPending(request.status);
    const existing = await findAffiliate(merchant.id, request.affiliate.slug, true);
    const now = isoNow();
    const change = affiliateOnAccept(merchant.id, request, existing, now);
    try {
      await ddb.send(
        new TransactWriteCommand({
          TransactItems: [{ Update: decisionUpdate(merchant.id, uuid, 'accepted', now) }, affiliateWrite(merchant.id, request.affiliate.slug, change)],
        }),
      );
    } catch (error) {
      // Whatever condition failed (request decided meanwhile, affiliate changed) or conflicted,
      // the next round's fresh reads decide: 404, 422 or another try.
      if (!(error instanceof TransactionCanceledException) || attempt >= MAX_WRITE_ATTEMPTS) throw error;
      await backOff(attempt);
      continue;
    }
    const accepted: AffiliateRequestItem = { ...request, status: 'accepted', decided_at: now, updated_at: now, notification_pending_at: now };
    await notify(merchant, accepted);
    return accepted;
  }
};

/**
 * Declines a pending request: one conditional UpdateItem (pending -> declined); its old image
 * explains a refusal (404 when missing, 422 when already decided). Then the affiliate is e-mailed.
 * The request stays listable with status=declined.
 */
export const declineAffiliateRequest = async (merchant: Merchant, uuid: string): Promise<AffiliateRequestItem> => {
  for (let attempt = 1; ; attempt++) {
    try {
      const { Attributes } = await ddb.send(
        new UpdateCommand({
          ...decisionUpdate(merchant.id, uuid, 'declined', isoNow()),
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const declined = Attributes as AffiliateRequestItem;
      await notify(merchant, declined);
      return declined;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        if (!error.Item) throw notFound();
        // The old image comes back in wire format (the document client does not convert errors).
        throw notPending(error.Item.status?.S as AffiliateRequestStatus);
      }
      // A concurrent accept's transaction held the item: try again (the condition then decides).
      if (!isTransactionConflict(error) || attempt >= MAX_WRITE_ATTEMPTS) throw error;
      await backOff(attempt);
    }
  }
};
