import { itemKey } from './base';
import { uniquenessGuard } from './guard';

/**
 * The order_no guard of an order stored before order keys were derived from order_no (order.ts
 * orderUuidFor): still read by every create, so such an order's order_no stays taken; the seed
 * writes it beside a fixture order with a fixed uuid.
 */
const orderNoGuard = uniquenessGuard({
  type: 'order_no',
  holderField: 'order_uuid',
  key: (merchantId, orderNo) => itemKey(merchantId, `ORDER_NO#${orderNo}`),
});

export const { key: orderNoKey, record: orderNoRecord, holder: orderNoHolder } = orderNoGuard;
