import { route } from '#functions/routes';
import { getWebhook } from '#shared/domain/webhooks';
import { apiHandler } from '#shared/http/api-handler';
import { uuidParams } from '#shared/schemas/common';

export const handler = apiHandler(route('webhooks-get'), { params: uuidParams }, async ({ merchant, params }) => ({
  data: { webhook: await getWebhook(merchant.id, params.uuid) },
}));
