import { apiHandler } from '../../shared/http/api-handler';
import { toOrderResponse, updateShipping } from '../../shared/domain/orders';
import { uuidParams } from '../../shared/schemas/common';
import { orderUpdateBody } from '../../shared/schemas/order';

export const handler = apiHandler('orders-update', { params: uuidParams, body: orderUpdateBody }, async ({ merchant, params, body }) => ({
  data: { order: toOrderResponse(await updateShipping(merchant.id, params.uuid, body.total_shipping_value)) },
}));
