import { route } from '#functions/routes';
import { toOrderResponse, updateShipping } from '#shared/domain/orders';
import { apiHandler } from '#shared/http/api-handler';
import { uuidParams } from '#shared/schemas/common';
import { orderUpdateBody } from '#shared/schemas/order';

/** The update bumps the order's version; the change feed announces order.updated from the table's stream. */
export const handler = apiHandler(
  route('orders-update'),
  { params: uuidParams, body: orderUpdateBody },
  async ({ merchant, params, body, identity }) => {
    const order = await updateShipping(merchant.id, params.uuid, body.total_shipping_value, identity);
    return { data: { order: toOrderResponse(order) } };
  },
);
