import { route } from '#functions/routes';
import { orderCreateHandler } from './create-handler';

export const handler = orderCreateHandler(route('orders-create'), (order) => ({
  data: { order: { uuid: order.uuid, order_no: order.order_no } },
}));
