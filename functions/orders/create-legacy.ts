import { route } from '#functions/routes';
import { createOrder } from '#shared/domain/orders';
import { MESSAGES } from '#shared/errors';
import { postApiHandler } from '#shared/http/post-api-handler';
import { countMetric, METRIC } from '#shared/metrics';
import { orderCreateBody } from '#shared/schemas/order';

export const handler = postApiHandler(route('orders-create-legacy'), { body: orderCreateBody }, async ({ merchant, body, ...steps }) => {
  const order = await createOrder(merchant, body, steps);
  countMetric(METRIC.ordersAccepted);
  return { message: MESSAGES.orderCreated, data: { uuid: order.uuid, order_no: order.order_no } };
});
