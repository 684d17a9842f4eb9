import { route } from '#functions/routes';
import { MESSAGES } from '#shared/errors';
import { orderCreateHandler } from './create-handler';

export const handler = orderCreateHandler(route('orders-create-legacy'), (order) => ({
  message: MESSAGES.orderCreated,
  data: { uuid: order.uuid, order_no: order.order_no },
}));
