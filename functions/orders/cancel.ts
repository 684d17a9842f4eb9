import { route } from '#functions/routes';
import { cancelOrder, toOrderResponse } from '#shared/domain/orders';
import { postApiHandler } from '#shared/http/post-api-handler';
import { countMetric, METRIC } from '#shared/metrics';
import { uuidParams } from '#shared/schemas/common';

/** The cancel bumps the order's version; the change feed announces order.cancelled from the table's stream. */
export const handler = postApiHandler(route('orders-cancel'), { params: uuidParams }, async ({ merchant, params, identity }) => {
  const order = await cancelOrder(merchant.id, params.uuid, identity);
  countMetric(METRIC.ordersCancelled);
  return { data: { order: toOrderResponse(order) } };
});
