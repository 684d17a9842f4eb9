import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import type { OrderItem } from '#shared/db/entities/order';
import { computeCommission } from '#shared/domain/commissions';
import { AmountNotComputableError, rateInHundredths, rowCommission, sumExact } from '#shared/money';
import { slugParams } from '#shared/schemas/common';
import {
  MAX_MONEY_VALUE,
  MAX_ORDER_ROWS,
  MAX_ORDER_ROWS_BYTES,
  MAX_QUANTITY,
  orderCreateBody,
  orderUpdateBody,
} from '#shared/schemas/order';
import { laravelErrors } from '#shared/validation/messages';
import { orderBody } from './support/fixtures';

/**
 * A quantity of 9007199254740991 must never be accepted: it would overflow the commission step
 * on every delivery. Money and quantities have upper bounds that keep every number the
 * service derives from an order exact; the commission's one larger intermediate is BigInt.
 */
const errorsFor = (schema: z.ZodMiniType, input: unknown) => {
  const result = z.safeParse(schema, input);
  return result.success ? undefined : laravelErrors(result.error.issues, input);
};

const row = (overrides: Record<string, unknown>) => ({ ...orderBody().order_rows[0], ...overrides });

describe('the order limits', () => {
  it('keep every sum an order can produce below 2^53 (the proof in shared/schemas/order.ts)', () => {
    // (price + tax) * quantity over every row, plus shipping: the largest sum the service could form.
    const largestSum = BigInt(MAX_ORDER_ROWS) * 2n * BigInt(MAX_MONEY_VALUE) * BigInt(MAX_QUANTITY) + BigInt(MAX_MONEY_VALUE);
    expect(largestSum < BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it.each([
    ['quantity', Number.MAX_SAFE_INTEGER, `The order rows.0.quantity field must not be greater than ${MAX_QUANTITY}.`],
    ['quantity', MAX_QUANTITY + 1, `The order rows.0.quantity field must not be greater than ${MAX_QUANTITY}.`],
    ['quantity', 1e20, `The order rows.0.quantity field must not be greater than ${MAX_QUANTITY}.`],
    ['price_value', MAX_MONEY_VALUE + 1, `The order rows.0.price value field must not be greater than ${MAX_MONEY_VALUE}.`],
    ['price_value', 2 ** 53 + 2, `The order rows.0.price value field must not be greater than ${MAX_MONEY_VALUE}.`],
    ['tax_value', MAX_MONEY_VALUE + 1, `The order rows.0.tax value field must not be greater than ${MAX_MONEY_VALUE}.`],
  ])('refuses a row %s of %d with the Laravel max message', (field, value, message) => {
    // Act
    const errors = errorsFor(orderCreateBody, orderBody({ order_rows: [row({ [field]: value })] }));

    // Assess
    expect(errors).toEqual({ [`order_rows.0.${field}`]: [message] });
  });

  it('refuses a shipping value over the bound on create and on PATCH', () => {
    // Act
    const onCreate = errorsFor(orderCreateBody, orderBody({ total_shipping_value: MAX_MONEY_VALUE + 1 }));
    const onPatch = errorsFor(orderUpdateBody, { total_shipping_value: Number.MAX_SAFE_INTEGER });

    // Assess
    const message = `The total shipping value field must not be greater than ${MAX_MONEY_VALUE}.`;
    expect(onCreate).toEqual({ total_shipping_value: [message] });
    expect(onPatch).toEqual({ total_shipping_value: [message] });
  });

  it('accepts every value at its bound, and still says "must be an integer" for a fraction', () => {
    // Act
    const atBounds = errorsFor(
      orderCreateBody,
      orderBody({
        total_shipping_value: MAX_MONEY_VALUE,
        order_rows: [row({ price_value: MAX_MONEY_VALUE, tax_value: MAX_MONEY_VALUE, quantity: MAX_QUANTITY })],
      }),
    );
    const fraction = errorsFor(orderCreateBody, orderBody({ order_rows: [row({ quantity: 1.5 })] }));

    // Assess
    expect(atBounds).toBeUndefined();
    expect(fraction).toEqual({ 'order_rows.0.quantity': ['The order rows.0.quantity field must be an integer.'] });
  });
});

describe('the storage limits of an order', () => {
  const EMOJI = '\u{1F3D5}';

  it('counts order_no and affiliate_slug in characters, as the spec does: 255 outside the BMP are taken, 256 refused naming the field', () => {
    // Act
    const taken = errorsFor(orderCreateBody, orderBody({ order_no: EMOJI.repeat(255), affiliate_slug: EMOJI.repeat(255) }));
    const refused = errorsFor(orderCreateBody, orderBody({ order_no: EMOJI.repeat(256), affiliate_slug: EMOJI.repeat(256) }));

    // Assess
    expect(taken).toBeUndefined();
    expect(refused).toEqual({
      order_no: ['The order no field must not be greater than 255 characters.'],
      affiliate_slug: ['The affiliate slug field must not be greater than 255 characters.'],
    });
  });

  it('takes a slug path parameter of 255 characters outside the BMP (no item has it: 404), not 256', () => {
    // Act and assess
    expect(z.safeParse(slugParams, { slug: EMOJI.repeat(255) }).success).toBe(true);
    expect(z.safeParse(slugParams, { slug: EMOJI.repeat(256) }).success).toBe(false);
  });

  it('refuses an order whose rows take more than the stored item can hold (200 rows of 255 three-byte characters), naming order_rows', () => {
    // Prepare
    const text = '\u20AC'.repeat(255);
    const rows = Array.from({ length: MAX_ORDER_ROWS }, () => row({ product_name: text, product_sku: text, segment_slug: text }));

    // Act
    const errors = errorsFor(orderCreateBody, orderBody({ order_rows: rows }));

    // Assess
    expect(errors).toEqual({
      order_rows: [`The order rows field must not be greater than ${MAX_ORDER_ROWS_BYTES / 1024} kilobytes in total.`],
    });
  });

  it('accepts the largest order of one-byte texts: 200 rows of 255-character fields', () => {
    // Prepare
    const text = 'x'.repeat(255);
    const rows = Array.from({ length: MAX_ORDER_ROWS }, () => row({ product_name: text, product_sku: text, segment_slug: text }));

    // Act and assess
    expect(errorsFor(orderCreateBody, orderBody({ order_rows: rows, order_no: text, affiliate_slug: text }))).toBeUndefined();
  });
});

describe('commission arithmetic', () => {
  it('rounds half up exactly, like Math.round on the exact value', () => {
    expect(rowCommission(20_000, 1, 12.5)).toEqual({ base: 20_000, amount: 2_500 });
    expect(rowCommission(5_999, 3, 9)).toEqual({ base: 17_997, amount: Math.round((17_997 * 9) / 100) });
    expect(rowCommission(1, 1, 50)).toEqual({ base: 1, amount: 1 });
    expect(rowCommission(1, 1, 49.99)).toEqual({ base: 1, amount: 0 });
    expect(rateInHundredths(0.1 + 0.2)).toBe(30n);
  });

  it('is exact for the largest valid order, where floating point is not', () => {
    // Prepare: 200 rows at the bounds, at a rate with two decimals
    const rate = 99.99;
    const rows = Array.from({ length: MAX_ORDER_ROWS }, () => rowCommission(MAX_MONEY_VALUE, MAX_QUANTITY, rate));

    // Act
    const total = sumExact(rows.map((entry) => entry.amount));

    // Assess: base 1e13 * 9999 / 10000 = 9,999,000,000,000 per row, exactly
    expect(rows[0]).toEqual({ base: 10_000_000_000_000, amount: 9_999_000_000_000 });
    expect(total).toBe(1_999_800_000_000_000);
    expect(Number.isSafeInteger(total)).toBe(true);
  });

  it('refuses what it cannot compute exactly: an order stored before the limits, a rate outside 0..100 %', () => {
    expect(() => rowCommission(19_900, Number.MAX_SAFE_INTEGER, 10)).toThrow(AmountNotComputableError);
    expect(() => rowCommission(19_900, 2 ** 53 + 2, 10)).toThrow(AmountNotComputableError);
    expect(() => rowCommission(19_900, 1, 150)).toThrow(AmountNotComputableError);
    expect(() => rowCommission(19_900, 1, Number.NaN)).toThrow(AmountNotComputableError);
    expect(() => sumExact([Number.MAX_SAFE_INTEGER, 1])).toThrow(AmountNotComputableError);
  });
});

describe('computeCommission', () => {
  const poison: OrderItem = {
    uuid: '00000000-0000-4000-8000-00000000000a',
    seq: 1,
    order_no: 'P-1',
    affiliate_slug: 'alice',
    total_shipping_value: 0,
    currency_code: 'EUR',
    order_rows: [
      {
        uuid: 'row-1',
        product_sku: null,
        product_name: 'Tent',
        segment_slug: null,
        price_value: 19_900,
        tax_value: null,
        quantity: Number.MAX_SAFE_INTEGER,
      },
    ],
    customer: null,
    created_at: '2026-03-10T08:00:00.000Z',
    updated_at: '2026-03-10T08:00:00.000Z',
  };
  const segments = [{ uuid: 'seg-default', slugs: [], rates: { gold: 10 }, is_default: true }];

  it('throws AmountNotComputableError for the poison order of the issue, instead of an unsafe number', () => {
    expect(() => computeCommission(poison, segments, { tier_slug: 'gold' })).toThrow(AmountNotComputableError);
  });

  it('reads a tier rate as an own key only: a tier named constructor has no rate', () => {
    // Act
    const commission = computeCommission({ ...poison, order_rows: [{ ...poison.order_rows[0]!, quantity: 1 }] }, segments, {
      tier_slug: 'constructor',
    });

    // Assess
    expect(commission.rows[0]).toMatchObject({ rate: 0, amount: 0 });
    expect(commission.total_amount).toBe(0);
  });
});
