import { itemKey } from './base';
import { uniquenessGuard } from './guard';

/** Guard item: order_no is unique per merchant. Put in the same transaction as the order. */
const orderNoGuard = uniquenessGuard({
  type: 'order_no',
  holderField: 'order_uuid',
  key: (merchantId, orderNo) => itemKey(merchantId, `ORDER_NO#${orderNo}`),
});

export const {
  key: orderNoKey,
  record: orderNoRecord,
  putPart: putOrderNoPart,
  holder: orderNoHolder,
  holderOf: orderNoHolderOf,
} = orderNoGuard;
