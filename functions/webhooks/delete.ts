import { route } from '#functions/routes';
import { deleteWebhook } from '#shared/domain/webhooks';
import { apiHandler } from '#shared/http/api-handler';
import { uuidParams } from '#shared/schemas/common';

/** 200 with data null; its deliveries are no longer reachable (404) and expire with their TTL. */
export const handler = apiHandler(route('webhooks-delete'), { params: uuidParams }, async ({ merchant, params }) => {
  await deleteWebhook(merchant.id, params.uuid);
  return { data: null };
});
