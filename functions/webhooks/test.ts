import { route } from '#functions/routes';
import { testWebhook } from '#shared/domain/webhooks';
import { postApiHandler } from '#shared/http/post-api-handler';
import { uuidParams } from '#shared/schemas/common';

/** 202: the `webhook.test` event is queued; its delivery shows in the endpoint's deliveries. */
export const handler = postApiHandler(route('webhooks-test'), { params: uuidParams }, async ({ merchant, params }) => ({
  data: { delivery: await testWebhook(merchant.id, params.uuid) },
}));
