import { route } from '#functions/routes';
import { toTierResponse } from '#shared/domain/program-model';
import { listTiers } from '#shared/domain/tiers';
import { apiHandler } from '#shared/http/api-handler';
import { laravelPagination } from '#shared/http/pagination';
import { programListQuery } from '#shared/schemas/program';

export const handler = apiHandler(route('tiers-list'), { query: programListQuery }, async ({ merchant, query, link }) => {
  const { total, tiers } = await listTiers(merchant.id, query);
  return { data: { tiers: tiers.map(toTierResponse) }, meta: { pagination: laravelPagination(total, query, link) } };
});
