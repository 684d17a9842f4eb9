import { route } from '#functions/routes';
import { getOrder, toOrderResponse } from '#shared/domain/orders';
import { apiHandler } from '#shared/http/api-handler';
import { uuidParams } from '#shared/schemas/common';

export const handler = apiHandler(route('orders-get'), { params: uuidParams }, async ({ merchant, params }) => ({
  data: { order: toOrderResponse(await getOrder(merchant.id, params.uuid)) },
}));
