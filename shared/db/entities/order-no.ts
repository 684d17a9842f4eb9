import { itemKey } from './base';
import { uniquenessGuard } from './guard';

/** The order_no guard of orders stored before order keys were derived from order_no: read by every create, so theirs stay taken. */
const orderNoGuard = uniquenessGuard({
  type: 'order_no',
  holderField: 'order_uuid',
  key: (merchantId, orderNo) => itemKey(merchantId, `ORDER_NO#${orderNo}`),
});

export const { key: orderNoKey, record: orderNoRecord, holder: orderNoHolder } = orderNoGuard;
