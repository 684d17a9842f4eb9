import { route } from '#functions/routes';
import { recoverDeliveries } from '#shared/domain/webhooks';
import { postApiHandler } from '#shared/http/post-api-handler';
import { uuidParams } from '#shared/schemas/common';
import { recoverableSince, webhookRecoverBody } from '#shared/schemas/webhooks';

/** 202: what failed since `since` (default: 14 days back) is queued again, up to 1,000; the body is required (`{}` for the default). */
export const handler = postApiHandler(
  route('webhooks-recover'),
  { params: uuidParams, body: webhookRecoverBody, bodyRequired: true },
  async ({ merchant, params, body }) => ({
    data: { recovery: await recoverDeliveries(merchant.id, params.uuid, body.since ?? recoverableSince()) },
  }),
);
