import { route } from '#functions/routes';
import { listAffiliateRequests, toAffiliateRequestResponse } from '#shared/domain/affiliate-requests';
import { apiHandler } from '#shared/http/api-handler';
import { laravelPagination } from '#shared/http/pagination';
import { affiliateRequestListQuery } from '#shared/schemas/program';

export const handler = apiHandler(
  route('affiliate-requests-list'),
  { query: affiliateRequestListQuery },
  async ({ merchant, query, link }) => {
    const { total, requests } = await listAffiliateRequests(merchant.id, query);
    return { data: requests.map(toAffiliateRequestResponse), meta: { pagination: laravelPagination(total, query, link) } };
  },
);
