import { route } from '#functions/routes';
import { updateWebhook } from '#shared/domain/webhooks';
import { apiHandler } from '#shared/http/api-handler';
import { uuidParams } from '#shared/schemas/common';
import { webhookUpdateBody } from '#shared/schemas/webhooks';

export const handler = apiHandler(
  route('webhooks-update'),
  { params: uuidParams, body: webhookUpdateBody },
  async ({ merchant, params, body }) => ({ data: { webhook: await updateWebhook(merchant.id, params.uuid, body) } }),
);
