import { route } from '#functions/routes';
import { toOrderResponse, updateShipping } from '#shared/domain/orders';
import { apiHandler } from '#shared/http/api-handler';
import { publishOrderEvents } from '#shared/queue/orders';
import { uuidParams } from '#shared/schemas/common';
import { orderUpdateBody } from '#shared/schemas/order';

/** The update writes its order.shipping_updated event on the outbox; the fast path sends it at once. */
export const handler = apiHandler(
  route('orders-update'),
  { params: uuidParams, body: orderUpdateBody },
  async ({ merchant, params, body, identity }) => {
    const order = await updateShipping(merchant.id, params.uuid, body.total_shipping_value, identity);
    await publishOrderEvents(merchant.id, order);
    return { data: { order: toOrderResponse(order) } };
  },
);
