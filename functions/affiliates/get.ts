import { route } from '#functions/routes';
import { getAffiliate } from '#shared/domain/affiliates';
import { apiHandler } from '#shared/http/api-handler';
import { slugParams } from '#shared/schemas/common';

export const handler = apiHandler(route('affiliates-get'), { params: slugParams }, async ({ merchant, params }) => ({
  data: { affiliate: await getAffiliate(merchant.id, params.slug) },
}));
