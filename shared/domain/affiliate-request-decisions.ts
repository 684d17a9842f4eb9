import { functionTable } from '#shared/db/client';
import { type AffiliateItem, affiliateCountChanges, affiliateKey, affiliateRecord, getAffiliate } from '#shared/db/entities/affiliate';
import {
  type AffiliateRequestItem,
  type AffiliateRequestStatus,
  affiliateRequestKey,
  decideRequest,
  decideRequestPart,
  decisionCountChanges,
  getAffiliateRequest,
  RequestDecisionRefused,
} from '#shared/db/entities/affiliate-request';
import { applyCountChanges, type CountChange, markCountsForRecount, takeSequence } from '#shared/db/entities/counter';
import type { Merchant } from '#shared/db/merchants';
import { backOff, WRITE_ATTEMPTS, withWriteRetry } from '#shared/db/retry';
import { TransactionRefused, type TransactPart, transactWrite } from '#shared/db/transact';
import { isRetryableWriteFailure } from '#shared/dependency-errors';
import { asError, busy, notFound, REQUEST_MESSAGES, ruleRefused } from '#shared/errors';
import { logger } from '#shared/logger';
import { requestDecisionMessage } from '#shared/mail/messages';
import { deliverNotification } from '#shared/mail/send';
import { type RequestIdentity, requestIdentity } from '#shared/request-identity';
import { isoNow } from '#shared/time';
import { affiliateOnAccept } from './program-model';

export { toAcceptedRequestResponse, toAffiliateRequestResponse } from './program-model';

const notPending = (status: AffiliateRequestStatus) =>
  ruleRefused(status === 'accepted' ? REQUEST_MESSAGES.alreadyAccepted : REQUEST_MESSAGES.alreadyDeclined);

/** The affiliate half of an accept, conditional on the affiliate as read, with the count changes it makes once committed. */
const affiliateChange = async (
  merchant: Merchant,
  request: AffiliateRequestItem,
  existing: AffiliateItem | undefined,
  now: string,
): Promise<{ part: TransactPart; counts: CountChange[] }> => {
  const change = affiliateOnAccept(existing);
  const joining = { ...request.affiliate, status: 'active' as const, accepted_at: now };
  switch (change.kind) {
    case 'create': {
      const item = affiliateRecord(
        merchant.id,
        { ...joining, seq: await takeSequence(functionTable, merchant.id, 'affiliates'), tier: merchant.defaultTier },
        now,
      );
      return { part: { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } }, counts: affiliateCountChanges(item) };
    }
    case 'reactivate': {
      const old = change.existing;
      const tier = old.tier_slug ?? merchant.defaultTier;
      const rebuilt = affiliateRecord(merchant.id, { ...joining, seq: old.seq, tier, created_at: old.created_at }, now);
      return {
        // The stored item first: attributes this builder does not know survive the Put.
        part: {
          Put: {
            Item: { ...old, ...rebuilt },
            ConditionExpression: '#status <> :active AND updated_at = :seen',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':active': 'active', ':seen': old.updated_at },
          },
        },
        counts: old.tier_slug === null && tier !== null ? affiliateCountChanges(rebuilt).slice(1) : [],
      };
    }
    case 'unchanged':
      return {
        part: {
          ConditionCheck: {
            Key: affiliateKey(merchant.id, request.affiliate.slug),
            ConditionExpression: '#status = :active',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':active': 'active' },
          },
        },
        counts: [],
      };
  }
};

/** After a decision committed: its counts, then the e-mail; `recovered` (an earlier attempt's): counts marked, the e-mail left owed. */
const settle = async (merchant: Merchant, request: AffiliateRequestItem, counts: CountChange[], recovered = false) => {
  await (recovered ? markCountsForRecount : applyCountChanges)(functionTable, merchant.id, counts).catch((error: unknown) =>
    logger.error('Decision committed; the list counts were not updated', { uuid: request.uuid, error: asError(error) }),
  );
  if (recovered) return;
  await deliverNotification(affiliateRequestKey(merchant.id, request.uuid), requestDecisionMessage(request, merchant.name), {
    notification: `affiliate_request_${request.status}`,
    uuid: request.uuid,
  });
};

/** Accepts a pending request, activating its affiliate, in ONE transaction on what was read (docs/design-notes.md#affiliate-program). */
export const acceptAffiliateRequest = async (
  merchant: Merchant,
  uuid: string,
  identity: RequestIdentity = requestIdentity(merchant.id, undefined),
): Promise<AffiliateRequestItem> => {
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const request = await getAffiliateRequest(functionTable, merchant.id, uuid, true);
    if (!request) throw notFound();
    if (request.status === 'accepted' && request.last_write_id === identity.writeId) return recoverAccept(merchant, request);
    if (request.status !== 'pending') throw notPending(request.status);
    const existing = await getAffiliate(functionTable, merchant.id, request.affiliate.slug, true);
    const now = isoNow();
    const affiliate = await affiliateChange(merchant, request, existing, now);
    try {
      await transactWrite(functionTable, {
        request: decideRequestPart(merchant.id, uuid, 'accepted', now, identity.writeId),
        affiliate: affiliate.part,
      });
    } catch (error) {
      // Whatever failed or conflicted, the next round's fresh reads decide: 404, 422 or another try.
      if (!(error instanceof TransactionRefused) && !isRetryableWriteFailure(error)) throw error;
      await backOff(attempt);
      continue;
    }
    const accepted: AffiliateRequestItem = {
      ...request,
      status: 'accepted',
      decided_at: now,
      updated_at: now,
      notification_pending_at: now,
    };
    await settle(merchant, accepted, [...decisionCountChanges(accepted), ...affiliate.counts]);
    return accepted;
  }
  throw busy();
};

/** This request's own accept, applied by an attempt whose answer was lost: answered again, its count blocks marked for recount. */
const recoverAccept = async (merchant: Merchant, request: AffiliateRequestItem): Promise<AffiliateRequestItem> => {
  const affiliate = await getAffiliate(functionTable, merchant.id, request.affiliate.slug, true);
  await settle(merchant, request, [...decisionCountChanges(request), ...(affiliate ? affiliateCountChanges(affiliate) : [])], true);
  return request;
};

/** Declines a pending request in one conditional UpdateItem, whose old image explains a refusal; then the affiliate is e-mailed. */
export const declineAffiliateRequest = async (
  merchant: Merchant,
  uuid: string,
  identity: RequestIdentity = requestIdentity(merchant.id, undefined),
): Promise<AffiliateRequestItem> => {
  let declined: AffiliateRequestItem;
  let recovered = false;
  try {
    declined = await withWriteRetry(() => decideRequest(functionTable, merchant.id, uuid, 'declined', isoNow(), identity.writeId));
  } catch (error) {
    if (!(error instanceof RequestDecisionRefused)) throw error;
    if (error.request?.status !== 'declined' || error.request.last_write_id !== identity.writeId)
      throw error.request ? notPending(error.request.status) : notFound();
    declined = error.request;
    recovered = true;
  }
  await settle(merchant, declined, decisionCountChanges(declined), recovered);
  return declined;
};
