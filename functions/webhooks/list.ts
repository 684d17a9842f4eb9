import { route } from '#functions/routes';
import { listWebhooks } from '#shared/domain/webhooks';
import { apiHandler } from '#shared/http/api-handler';

/** Every endpoint of the merchant (at most 20), oldest first: no paging. */
export const handler = apiHandler(route('webhooks-list'), {}, async ({ merchant }) => ({
  data: { webhooks: await listWebhooks(merchant.id) },
}));
