import { route } from '#functions/routes';
import { resendDelivery } from '#shared/domain/webhooks';
import { postApiHandler } from '#shared/http/post-api-handler';
import { deliveryParams } from '#shared/schemas/webhooks';

/** 202: the delivery's event is queued again, as a first attempt with the same webhook-id. */
export const handler = postApiHandler(route('webhooks-resend'), { params: deliveryParams }, async ({ merchant, params }) => ({
  data: { delivery: await resendDelivery(merchant.id, params.uuid, params.id) },
}));
