import { apiHandler } from '../../shared/http/api-handler';
import { cancelOrder, toOrderResponse } from '../../shared/domain/orders';
import { uuidParams } from '../../shared/schemas/common';

export const handler = apiHandler('orders-cancel', { params: uuidParams }, async ({ merchant, params }) => ({
  data: { order: toOrderResponse(await cancelOrder(merchant.id, params.uuid)) },
}));
