import { route } from '#functions/routes';
import { listOrders, toOrderResponse } from '#shared/domain/orders';
import { apiHandler } from '#shared/http/api-handler';
import { fittingPage, laravelPagination } from '#shared/http/pagination';
import { orderListQuery } from '#shared/schemas/order';

export const handler = apiHandler(route('orders-list'), { query: orderListQuery }, async ({ merchant, query, link }) => {
  const { total, orders } = await listOrders(merchant.id, query);
  return {
    data: { orders: fittingPage(orders.map(toOrderResponse)) },
    meta: { pagination: laravelPagination(total, query, link) },
  };
});
