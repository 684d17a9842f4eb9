import * as z from 'zod/mini';
import { pageQueryShape } from '../http/pagination';
import { emailAddress, nonNegativeInt, optionalString, requiredString, text } from './common';

/** Rows per order: at least 1 (spec); at most 200 (our cap, keeps an order item well under 400 KB). */
export const MAX_ORDER_ROWS = 200;

export const orderRow = z.object({
  product_sku: optionalString(),
  product_name: requiredString(),
  segment_slug: optionalString(),
  price_value: nonNegativeInt(),
  tax_value: z.optional(z.nullable(nonNegativeInt())),
  quantity: z.int().check(z.gt(0)),
});

export const customer = z.object({
  name: optionalString(),
  email: emailAddress(),
});

/** The order creation body, shared by the legacy and the V2 endpoint. */
export const orderCreateBody = z.object({
  affiliate_slug: requiredString(),
  order_no: requiredString(),
  total_shipping_value: nonNegativeInt(),
  currency_code: text().check(z.length(3)),
  customer: z.optional(z.nullable(customer)),
  order_rows: z.array(orderRow).check(z.minLength(1), z.maxLength(MAX_ORDER_ROWS)),
});

export type OrderCreateInput = z.output<typeof orderCreateBody>;

/** PATCH accepts total_shipping_value and nothing else; other fields are refused, not ignored. */
export const orderUpdateBody = z.strictObject({
  total_shipping_value: nonNegativeInt(),
});

export const orderListQuery = z.object(pageQueryShape);
