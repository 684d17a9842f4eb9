import { postApiHandler } from '../../shared/http/post-api-handler';
import { cancelOrder, toOrderResponse } from '../../shared/domain/orders';
import { uuidParams } from '../../shared/schemas/common';

export const handler = postApiHandler('orders-cancel', { params: uuidParams }, async ({ merchant, params }) => ({
  data: { order: toOrderResponse(await cancelOrder(merchant.id, params.uuid)) },
}));
