import * as z from 'zod/mini';
import { pageQueryShape } from '#shared/http/pagination';
import { boundedInt, emailAddress, optionalString, requiredKeyString, requiredString, text } from './common';

/** Rows per order: at least 1 (spec); at most 200 (our cap, keeps an order item well under 400 KB). */
export const MAX_ORDER_ROWS = 200;

/**
 * The limits of an order's numbers (docs/design-notes.md, "Limits"). Money is an integer in the currency's minor
 * unit (cents for EUR), so MAX_MONEY_VALUE is 100,000,000.00 EUR, 10,000,000,000 JPY or
 * 100,000,000.00 IDR. The bounds make every number the service derives from a valid order an
 * exact JavaScript number, i.e. an integer <= Number.MAX_SAFE_INTEGER = 2^53 - 1 (about 9.007e15):
 *
 *   a row's base        price_value * quantity                 <= 1e10 * 1e3             = 1e13
 *   an order's sums     sum over <= 200 rows of (price_value + tax_value) * quantity, plus
 *                       total_shipping_value                   <= 200 * 2e10 * 1e3 + 1e10 ~ 4.00001e15
 *   its commission      sum of round(base * rate / 100), rate in [0, 100] %
 *                                                              <= sum of bases           <= 2e15
 *
 * All below 2^53 with room to spare (the tax term is there so an order total stays exact too).
 * The one intermediate that does not fit, base * rate in hundredths of a percent (<= 1e13 * 1e4 =
 * 1e17), is computed in BigInt (shared/money.ts) and rounded once. test/unit/order-limits.test.ts
 * checks the inequality. Raising one bound means lowering another (or BigInt sums and stored
 * numbers beyond 2^53).
 */
export const MAX_MONEY_VALUE = 10_000_000_000;
export const MAX_QUANTITY = 1_000;

/** A money field: 0 <= value <= MAX_MONEY_VALUE, in minor units. */
export const moneyValue = () => boundedInt(0, MAX_MONEY_VALUE);

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
  email: emailAddress(),
});

/**
 * An order is stored as one item (DynamoDB: 400 KB at most) and its events carry it whole (a
 * webhook delivery record keeps the event beside its outcome): an order whose rows' texts take
 * more than this many UTF-8 bytes is refused with a 422 on `order_rows`, however valid each field.
 */
export const MAX_ORDER_ROWS_BYTES = 340 * 1024;

const rowsBytes = (rows: readonly z.output<typeof orderRow>[]) => Buffer.byteLength(JSON.stringify(rows), 'utf8');

/** The order creation body, shared by the legacy and the V2 endpoint. */
export const orderCreateBody = z.object({
  affiliate_slug: requiredKeyString(),
  order_no: requiredKeyString(),
  total_shipping_value: moneyValue(),
  currency_code: text().check(z.length(3)),
  customer: z.optional(z.nullable(customer)),
  order_rows: z.array(orderRow).check(
    z.minLength(1),
    z.maxLength(MAX_ORDER_ROWS),
    z.refine((rows) => rowsBytes(rows) <= MAX_ORDER_ROWS_BYTES, {
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
