import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import type { ListSpec } from '#shared/db/pages';
import { GSI1, type TableRef } from '#shared/db/table-def';
import { isoNow } from '#shared/time';
import { nullableString, storedItem, updateOrRefused } from './base';
import { type CountChange, countChange } from './counter';
import { listPartition, primaryListEntry } from './list-entry';
import { notificationState, owedNotificationUpdate } from './notification';

export const REQUEST_STATUSES = ['pending', 'accepted', 'declined'] as const;
export type AffiliateRequestStatus = (typeof REQUEST_STATUSES)[number];

const requestSchema = z.looseObject({
  uuid: z.string(),
  seq: z.number(),
  status: z.enum(REQUEST_STATUSES),
  affiliate: z.object({ slug: z.string(), name: z.string(), email: z.string() }),
  requested_at: z.string(),
  decided_at: nullableString(),
  updated_at: z.string(),
  /** The write id of the request that decided it (shared/request-identity.ts). */
  last_write_id: z.optional(z.string()),
  ...notificationState,
});
export type AffiliateRequestItem = z.output<typeof requestSchema>;

/** A request of an affiliate to join the program: `AREQ#<uuid>`, listed on gsi1 under its current status. */
export const {
  key: affiliateRequestKey,
  parse: parseAffiliateRequest,
  get: getAffiliateRequest,
} = storedItem('affiliate request', requestSchema, 'AREQ#');

export const affiliateRequestRecord = (
  merchantId: string,
  request: Pick<AffiliateRequestItem, 'seq' | 'affiliate'> & Partial<Pick<AffiliateRequestItem, 'uuid' | 'status' | 'requested_at'>>,
  now = isoNow(),
) => {
  const uuid = request.uuid ?? randomUUID();
  const status = request.status ?? 'pending';
  return {
    ...affiliateRequestKey(merchantId, uuid),
    ...primaryListEntry(merchantId, 'affiliate_requests', status, request.seq),
    type: 'affiliate_request',
    uuid,
    seq: request.seq,
    status,
    affiliate: { slug: request.affiliate.slug.toLowerCase(), name: request.affiliate.name, email: request.affiliate.email.toLowerCase() },
    requested_at: request.requested_at ?? now,
    decided_at: status === 'pending' ? null : now,
    updated_at: now,
  };
};

export const requestCountChange = (request: Pick<AffiliateRequestItem, 'seq'>, status: AffiliateRequestStatus, delta: number) =>
  countChange('affiliate_requests', status, request.seq, delta);

/** What a decision moves in the counts: the request from `pending` to the status it was decided to. */
export const decisionCountChanges = (decided: Pick<AffiliateRequestItem, 'seq' | 'status'>): CountChange[] => [
  requestCountChange(decided, 'pending', -1),
  requestCountChange(decided, decided.status, 1),
];

export const affiliateRequestList = (merchantId: string, statuses: readonly AffiliateRequestStatus[]): ListSpec<AffiliateRequestItem> => ({
  merchantId,
  list: 'affiliate_requests',
  buckets: statuses,
  parse: parseAffiliateRequest,
});

/** The decision on a still pending request: it moves the request's list, owes its e-mail and records the write id a retry recognises. */
const decisionUpdate = (merchantId: string, uuid: string, decision: 'accepted' | 'declined', now: string, writeId: string) => {
  const key = affiliateRequestKey(merchantId, uuid);
  const owed = owedNotificationUpdate(key, now);
  return {
    Key: key,
    UpdateExpression: `SET #status = :decision, decided_at = :now, updated_at = :now, #listPk = :listPk, last_write_id = :writeId, ${owed.set}`,
    ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
    ExpressionAttributeNames: { '#status': 'status', '#listPk': GSI1.partitionKey },
    ExpressionAttributeValues: {
      ':decision': decision,
      ':now': now,
      ':writeId': writeId,
      ':pending': 'pending',
      ':listPk': listPartition(merchantId, 'affiliate_requests', decision),
      ...owed.values,
    },
  };
};

/** The request's part of the accept transaction. */
export const decideRequestPart = (...decision: Parameters<typeof decisionUpdate>) => ({ Update: decisionUpdate(...decision) });

export class RequestDecisionRefused extends Error {
  override name = 'RequestDecisionRefused';
  constructor(readonly request: AffiliateRequestItem | undefined) {
    super(request ? `Affiliate request is ${request.status}` : 'Affiliate request does not exist');
  }
}

/** The decision as one conditional UpdateItem (decline); a refusal carries the request as it was. */
export const decideRequest = async (db: TableRef, ...decision: Parameters<typeof decisionUpdate>) => {
  const result = await updateOrRefused(db, decisionUpdate(...decision));
  if ('refused' in result) throw new RequestDecisionRefused(result.refused && parseAffiliateRequest(result.refused));
  return parseAffiliateRequest(result.item);
};
