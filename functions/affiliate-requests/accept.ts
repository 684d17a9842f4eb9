import { route } from '#functions/routes';
import { acceptAffiliateRequest, toAcceptedRequestResponse } from '#shared/domain/affiliate-request-decisions';
import { postApiHandler } from '#shared/http/post-api-handler';
import { uuidParams } from '#shared/schemas/common';

export const handler = postApiHandler(
  route('affiliate-requests-accept'),
  { params: uuidParams },
  async ({ merchant, params, identity }) => ({
    data: { affiliate_request: toAcceptedRequestResponse(await acceptAffiliateRequest(merchant, params.uuid, identity)) },
  }),
);
