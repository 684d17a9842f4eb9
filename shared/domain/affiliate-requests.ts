import { functionTable } from '#shared/db/client';
import {
  type AffiliateRequestItem,
  type AffiliateRequestStatus,
  affiliateRequestList,
  getAffiliateRequest as readRequest,
} from '#shared/db/entities/affiliate-request';
import { readPage } from '#shared/db/pages';
import { orNotFound } from '#shared/errors';
import type { PageQuery } from '#shared/page-window';

// Affiliate-request reads; accept and decline (which e-mail) are in affiliate-request-decisions.ts.
export { toAffiliateRequestResponse } from './program-model';

/** One page of the merchant's requests in the given statuses, newest first (one index Query per status). */
export const listAffiliateRequests = async (
  merchantId: string,
  query: PageQuery & { status: readonly AffiliateRequestStatus[] },
): Promise<{ total: number; requests: AffiliateRequestItem[] }> => {
  const { total, items } = await readPage(functionTable, affiliateRequestList(merchantId, [...new Set(query.status)]), query);
  return { total, requests: items };
};

/** A consistent read, so a request shows its decision right after it answered. Missing or foreign: 404. */
export const getAffiliateRequest = (merchantId: string, uuid: string): Promise<AffiliateRequestItem> =>
  orNotFound(readRequest(functionTable, merchantId, uuid, true));
