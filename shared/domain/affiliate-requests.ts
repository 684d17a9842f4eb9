import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, functionTable, TABLE_NAME } from '../db/client';
import { keys, SK } from '../db/keys';
import { notFound } from '../http/errors';
import { slicePage, type PageQuery } from '../http/pagination';
import { newestFirst, type AffiliateRequestItem, type AffiliateRequestStatus } from './program-model';
import { queryPrefix } from './program-store';

/**
 * Affiliate-request reads. Accept and decline (which e-mail) live in affiliate-request-decisions.ts,
 * so the read functions do not load the mail modules or need their environment.
 */
export { toAffiliateRequestResponse } from './program-model';

/** Newest request first (requested_at), then by uuid. */
export const requestOrder = newestFirst<AffiliateRequestItem>((request) => request.requested_at, (request) => request.uuid);

/**
 * One page of the merchant's requests in the given statuses. One Query on the merchant partition
 * (AREQ# prefix), the status filter applied server-side.
 */
export const listAffiliateRequests = async (
  merchantId: string,
  query: PageQuery & { status: readonly AffiliateRequestStatus[] },
): Promise<{ total: number; requests: AffiliateRequestItem[] }> => {
  const values = Object.fromEntries(query.status.map((status, index) => [`:s${index}`, status]));
  const filter = { expression: `#status IN (${Object.keys(values).join(', ')})`, names: { '#status': 'status' }, values };
  const requests = (await queryPrefix<AffiliateRequestItem>(functionTable, merchantId, SK.affiliateRequest, filter)).sort(requestOrder);
  return { total: requests.length, requests: slicePage(requests, query) };
};

export const readRequest = async (merchantId: string, uuid: string, consistent = false) => {
  const { Item } = await ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: keys.affiliateRequest(merchantId, uuid), ConsistentRead: consistent }));
  return Item as AffiliateRequestItem | undefined;
};

/** One GetItem. Missing or foreign: 404. */
export const getAffiliateRequest = async (merchantId: string, uuid: string): Promise<AffiliateRequestItem> => {
  const request = await readRequest(merchantId, uuid);
  if (!request) throw notFound();
  return request;
};
