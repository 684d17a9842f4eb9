import { route } from '#functions/routes';
import { createOrder, replyFromCreatedOrder } from '#shared/domain/orders';
import { postApiHandler } from '#shared/http/post-api-handler';
import { countMetric, METRIC } from '#shared/metrics';
import { orderCreateBody } from '#shared/schemas/order';

const created = (order: { uuid: string; order_no: string }) => ({ data: { order: { uuid: order.uuid, order_no: order.order_no } } });

export const handler = postApiHandler(
  route('orders-create'),
  { body: orderCreateBody },
  async ({ merchant, body, ...steps }) => {
    const order = await createOrder(merchant, body, steps);
    countMetric(METRIC.ordersAccepted);
    return created(order);
  },
  // A retry with the key is answered from the order its request created: the 201 is not stored.
  { replyFromStore: replyFromCreatedOrder(created) },
);
