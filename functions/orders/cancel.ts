import { route } from '#functions/routes';
import { cancelOrder, toOrderResponse } from '#shared/domain/orders';
import { postApiHandler } from '#shared/http/post-api-handler';
import { countMetric, METRIC } from '#shared/metrics';
import { publishOrderEvents } from '#shared/queue/orders';
import { uuidParams } from '#shared/schemas/common';

/** The cancel writes its order.cancelled event on the outbox; the fast path sends it at once. */
export const handler = postApiHandler(route('orders-cancel'), { params: uuidParams }, async ({ merchant, params, identity }) => {
  const order = await cancelOrder(merchant.id, params.uuid, identity);
  countMetric(METRIC.ordersCancelled);
  await publishOrderEvents(merchant.id, order);
  return { data: { order: toOrderResponse(order) } };
});
