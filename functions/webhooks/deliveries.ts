import { route } from '#functions/routes';
import { listDeliveries } from '#shared/domain/webhooks';
import { apiHandler } from '#shared/http/api-handler';
import { uuidParams } from '#shared/schemas/common';
import { webhookDeliveriesQuery } from '#shared/schemas/webhooks';

/** Newest first, paged by cursor (meta.pagination.next_cursor). */
export const handler = apiHandler(
  route('webhooks-deliveries'),
  { params: uuidParams, query: webhookDeliveriesQuery },
  async ({ merchant, params, query }) => {
    const page = await listDeliveries(merchant.id, params.uuid, query.per_page, query.cursor);
    return { data: { deliveries: page.deliveries }, meta: { pagination: { per_page: query.per_page, next_cursor: page.next } } };
  },
);
