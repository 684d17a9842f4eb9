import * as z from 'zod/mini';
import { pageQueryShape } from '#shared/http/pagination';
import { boundedInt, emailAddress, optionalString, requiredString, text } from './common';

/** Rows per order: at least 1 (spec); at most 200 (our cap, keeps an order item well under 400 KB). */
export const MAX_ORDER_ROWS = 200;

/** Money in minor units, bounded so every number derived from a valid order stays exact (docs/design-notes.md#limits). */
export const MAX_MONEY_VALUE = 10_000_000_000;
export const MAX_QUANTITY = 1_000;

const moneyValue = () => boundedInt(0, MAX_MONEY_VALUE);

export const orderRow = z.object({
  product_sku: optionalString(),
  product_name: requiredString(),
  segment_slug: optionalString(),
  price_value: moneyValue(),
  tax_value: z.optional(z.nullable(moneyValue())),
  quantity: z.number().check(z.gt(0), z.maximum(MAX_QUANTITY), z.int()),
});

export const customer = z.object({
  name: optionalString(),
  // Kept as sent: the service never mails a customer.
  email: emailAddress({ mailedTo: false }),
});

/** An order is one item (400 KB at most) and its events carry it whole: rows past this many bytes of JSON are refused. */
export const MAX_ORDER_ROWS_BYTES = 340 * 1024;

/** The order creation body, shared by the legacy and the V2 endpoint. */
export const orderCreateBody = z.object({
  affiliate_slug: requiredString(),
  order_no: requiredString(),
  total_shipping_value: moneyValue(),
  currency_code: text().check(z.trim(), z.length(3)),
  customer: z.optional(z.nullable(customer)),
  order_rows: z.array(orderRow).check(
    z.minLength(1),
    z.maxLength(MAX_ORDER_ROWS),
    z.refine((rows) => Buffer.byteLength(JSON.stringify(rows), 'utf8') <= MAX_ORDER_ROWS_BYTES, {
      message: `The :attribute field must not be greater than ${MAX_ORDER_ROWS_BYTES / 1024} kilobytes in total.`,
    }),
  ),
});

export type OrderCreateInput = z.output<typeof orderCreateBody>;

/** PATCH accepts total_shipping_value and nothing else; other fields are refused, not ignored. */
export const orderUpdateBody = z.strictObject({
  total_shipping_value: moneyValue(),
});

export const orderListQuery = z.object(pageQueryShape);
