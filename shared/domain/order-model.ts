import { randomUUID } from 'node:crypto';
import { indexKeys, keys } from '../db/keys';
import type { OrderCreateInput } from '../schemas/order';
import { isoNow } from '../time';
import { currencyName } from './currency';

/**
 * The order model without I/O: the stored shape, its API presentation and the items one order's
 * creation writes. Used by the order repository (orders.ts) and by the seed.
 */

/** The stored order item (besides its keys). */
export type OrderItem = {
  uuid: string;
  seq: number;
  order_no: string;
  affiliate_slug: string;
  total_shipping_value: number;
  currency_code: string;
  order_rows: {
    uuid: string;
    product_sku: string | null;
    product_name: string;
    segment_slug: string | null;
    price_value: number;
    tax_value: number | null;
    quantity: number;
  }[];
  customer: { name: string | null; email: string } | null;
  created_at: string;
  updated_at: string;
  cancelled_at?: string;
  payment_id?: string;
};

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
  uuid: order.uuid,
  order_no: order.order_no,
  affiliate_slug: order.affiliate_slug,
  total_shipping_value: order.total_shipping_value,
  currency: { code: order.currency_code, name: currencyName(order.currency_code) },
  order_rows: order.order_rows.map((row) => ({
    uuid: row.uuid,
    product_sku: row.product_sku,
    product_name: row.product_name,
    segment_slug: row.segment_slug,
    price_value: row.price_value,
    tax_value: row.tax_value,
    quantity: row.quantity,
  })),
  customer: order.customer ? { name: order.customer.name, email: order.customer.email } : null,
  cancelled_at: order.cancelled_at ?? null,
  created_at: order.created_at,
  updated_at: order.updated_at,
});

/** Builds the order item from a validated body; used by the API and by the seed. */
export const buildOrderItem = (
  input: OrderCreateInput,
  extra: { uuid?: string; seq: number; created_at?: string; cancelled_at?: string; payment_id?: string },
): OrderItem => {
  const createdAt = extra.created_at ?? isoNow();
  return {
    uuid: extra.uuid ?? randomUUID(),
    seq: extra.seq,
    order_no: input.order_no,
    affiliate_slug: input.affiliate_slug.toLowerCase(),
    total_shipping_value: input.total_shipping_value,
    currency_code: input.currency_code.toUpperCase(),
    order_rows: input.order_rows.map((row) => ({
      uuid: randomUUID(),
      product_sku: row.product_sku ?? null,
      product_name: row.product_name,
      segment_slug: row.segment_slug ?? null,
      price_value: row.price_value,
      tax_value: row.tax_value ?? null,
      quantity: row.quantity,
    })),
    customer: input.customer ? { name: input.customer.name ?? null, email: input.customer.email } : null,
    created_at: createdAt,
    updated_at: createdAt,
    ...(extra.cancelled_at ? { cancelled_at: extra.cancelled_at } : {}),
    ...(extra.payment_id ? { payment_id: extra.payment_id } : {}),
  };
};

/**
 * The write items of one order's creation, in a fixed order (CancellationReasons are positional):
 * affiliate check, order_no guard, sequence counter, order (with its outbox entry), customer.
 * Shared with the seed, which writes history through the same items (its affiliate check only
 * asks that the affiliate exists: history may name one who is inactive now).
 */
export const orderTransactItems = (
  table: string,
  merchantId: string,
  order: OrderItem,
  expectedCount: number,
  options: { pending: boolean; checkAffiliate?: boolean },
) => {
  const now = isoNow();
  const affiliateCondition = options.checkAffiliate === false ? 'attribute_exists(pk)' : 'attribute_exists(pk) AND #status = :active';
  return [
    {
      ConditionCheck: {
        TableName: table,
        Key: keys.affiliate(merchantId, order.affiliate_slug),
        ConditionExpression: affiliateCondition,
        ...(options.checkAffiliate === false
          ? {}
          : { ExpressionAttributeNames: { '#status': 'status' }, ExpressionAttributeValues: { ':active': 'active' } }),
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...keys.orderNo(merchantId, order.order_no), type: 'order_no', order_uuid: order.uuid },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Update: {
        TableName: table,
        Key: keys.merchant(merchantId),
        UpdateExpression: 'SET orders_count = :next',
        ConditionExpression:
          expectedCount === 0 ? 'attribute_exists(pk) AND (attribute_not_exists(orders_count) OR orders_count = :expected)' : 'orders_count = :expected',
        ExpressionAttributeValues: { ':next': order.seq, ':expected': expectedCount },
        // A lost race hands back the current count, so the retry needs no extra read.
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    },
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.order(merchantId, order.uuid),
          ...indexKeys.orderSequence(merchantId, order.seq),
          ...(options.pending ? indexKeys.outboxPending(now) : {}),
          type: 'order',
          ...order,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...(order.customer
      ? [
          {
            Update: {
              TableName: table,
              Key: keys.customer(merchantId, order.customer.email),
              UpdateExpression:
                'SET #type = :type, email = if_not_exists(email, :email), #name = if_not_exists(#name, :name), created_at = if_not_exists(created_at, :now), updated_at = :now',
              ExpressionAttributeNames: { '#type': 'type', '#name': 'name' },
              ExpressionAttributeValues: { ':type': 'customer', ':email': order.customer.email, ':name': order.customer.name, ':now': now },
            },
          },
        ]
      : []),
  ];
};
