import { route } from '#functions/routes';
import { getAffiliateRequest, toAffiliateRequestResponse } from '#shared/domain/affiliate-requests';
import { apiHandler } from '#shared/http/api-handler';
import { uuidParams } from '#shared/schemas/common';

export const handler = apiHandler(route('affiliate-requests-get'), { params: uuidParams }, async ({ merchant, params }) => ({
  data: { affiliate_request: toAffiliateRequestResponse(await getAffiliateRequest(merchant.id, params.uuid)) },
}));
