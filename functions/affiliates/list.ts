import { route } from '#functions/routes';
import { listAffiliates } from '#shared/domain/affiliates';
import { apiHandler } from '#shared/http/api-handler';
import { laravelPagination } from '#shared/http/pagination';
import { affiliateListQuery } from '#shared/schemas/program';

export const handler = apiHandler(route('affiliates-list'), { query: affiliateListQuery }, async ({ merchant, query, link }) => {
  const { total, affiliates } = await listAffiliates(merchant.id, query);
  return { data: { affiliates }, meta: { pagination: laravelPagination(total, query, link) } };
});
