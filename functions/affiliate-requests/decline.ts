import { apiHandler } from '../../shared/http/api-handler';
import { declineAffiliateRequest, toAffiliateRequestResponse } from '../../shared/domain/affiliate-request-decisions';
import { uuidParams } from '../../shared/schemas/common';

export const handler = apiHandler('affiliate-requests-decline', { params: uuidParams }, async ({ merchant, params }) => ({
  data: { affiliate_request: toAffiliateRequestResponse(await declineAffiliateRequest(merchant, params.uuid)) },
}));
