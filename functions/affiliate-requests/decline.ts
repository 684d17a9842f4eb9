import { route } from '#functions/routes';
import { declineAffiliateRequest, toAffiliateRequestResponse } from '#shared/domain/affiliate-request-decisions';
import { postApiHandler } from '#shared/http/post-api-handler';
import { uuidParams } from '#shared/schemas/common';

export const handler = postApiHandler(
  route('affiliate-requests-decline'),
  { params: uuidParams },
  async ({ merchant, params, identity }) => ({
    data: { affiliate_request: toAffiliateRequestResponse(await declineAffiliateRequest(merchant, params.uuid, identity)) },
  }),
);
