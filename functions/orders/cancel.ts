import { postApiHandler } from '../../shared/http/post-api-handler';
import { cancelOrder, toOrderResponse } from '../../shared/domain/orders';
import { countMetric, METRIC } from '../../shared/metrics';
import { uuidParams } from '../../shared/schemas/common';

export const handler = postApiHandler('orders-cancel', { params: uuidParams }, async ({ merchant, params }) => {
  const order = await cancelOrder(merchant.id, params.uuid);
  countMetric(METRIC.ordersCancelled);
  return { data: { order: toOrderResponse(order) } };
});
