import type { OrderItem } from '#shared/db/entities/order';
import { currencyName } from './currency';
import { pick } from './program-model';

export const ORDER_MESSAGES = {
  orderNoTaken: 'The order no has already been taken.',
  affiliateInvalid: 'The selected affiliate slug is invalid.',
  currencyInvalid: 'The selected currency code is invalid.',
  currencyMismatch: (currency: string) => `The currency code must match the merchant account currency (${currency}).`,
  alreadyCancelled: 'The order is already cancelled.',
  tooOldToCancel: 'The order is older than one month and can no longer be cancelled.',
  linkedToPayment: 'The order is linked to a payment and cannot be cancelled.',
  cancelledNotUpdatable: 'The order is cancelled and can no longer be updated.',
} as const;

export const toOrderResponse = (order: OrderItem) => ({
  ...pick(order, ['uuid', 'order_no', 'affiliate_slug', 'total_shipping_value']),
  currency: { code: order.currency_code, name: currencyName(order.currency_code) },
  order_rows: order.order_rows.map((row) =>
    pick(row, ['uuid', 'product_sku', 'product_name', 'segment_slug', 'price_value', 'tax_value', 'quantity']),
  ),
  customer: order.customer ? pick(order.customer, ['name', 'email']) : null,
  cancelled_at: order.cancelled_at ?? null,
  ...pick(order, ['created_at', 'updated_at']),
});
