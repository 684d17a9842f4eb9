import { apiHandler } from '../../shared/http/api-handler';
import { acceptAffiliateRequest, toAcceptedRequestResponse } from '../../shared/domain/affiliate-request-decisions';
import { uuidParams } from '../../shared/schemas/common';

export const handler = apiHandler('affiliate-requests-accept', { params: uuidParams }, async ({ merchant, params }) => ({
  data: { affiliate_request: toAcceptedRequestResponse(await acceptAffiliateRequest(merchant, params.uuid)) },
}));
