import { route } from '#functions/routes';
import { toTierResponse } from '#shared/domain/program-model';
import { getTier } from '#shared/domain/tiers';
import { apiHandler } from '#shared/http/api-handler';
import { slugParams } from '#shared/schemas/common';

export const handler = apiHandler(route('tiers-get'), { params: slugParams }, async ({ merchant, params }) => ({
  data: { tier: toTierResponse(await getTier(merchant.id, params.slug)) },
}));
