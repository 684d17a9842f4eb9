import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import type { ListSpec } from '#shared/db/pages';
import type { TableRef } from '#shared/db/table-def';
import { derivedUuid } from '#shared/request-identity';
import type { OrderCreateInput } from '#shared/schemas/order';
import { isoNow } from '#shared/time';
import { nullableString, putItem, refusedItem, storedItem, updateIfAllowed, updateOrRefused } from './base';
import { countChange } from './counter';
import { ALL_BUCKET, primaryListEntry } from './list-entry';

const orderRow = z.object({
  uuid: z.string(),
  product_sku: nullableString(),
  product_name: z.string(),
  segment_slug: nullableString(),
  price_value: z.number(),
  tax_value: z.nullable(z.number()),
  quantity: z.number(),
});

const orderSchema = z.object({
  uuid: z.string(),
  seq: z.number(),
  order_no: z.string(),
  affiliate_slug: z.string(),
  total_shipping_value: z.number(),
  currency_code: z.string(),
  order_rows: z.array(orderRow),
  customer: z.nullable(z.object({ name: nullableString(), email: z.string() })),
  created_at: z.string(),
  updated_at: z.string(),
  cancelled_at: z.optional(z.string()),
  payment_id: z.optional(z.string()),
  /** Incremented by every change (create = 1); absent on orders stored before versions: 1. */
  version: z.optional(z.number()),
  /** Imported history (the seed): its creation is not a change anyone reacts to (the change feed skips it). */
  history: z.optional(z.boolean()),
  /** The write id of the request that wrote the order last (shared/request-identity.ts). */
  last_write_id: z.optional(z.string()),
  /** The write id of the request that created it: a retry of that request knows it after a PATCH or cancel changed `last_write_id`. */
  created_write_id: z.optional(z.string()),
});

export type OrderItem = z.output<typeof orderSchema>;

/** An order: `ORDER#<uuid>` in the merchant's partition, listed on gsi1 by its sequence number. */
export const { key: orderKey, parse: parseOrder, get: getOrder } = storedItem('order', orderSchema, 'ORDER#');

/** Builds the order from a validated body; used by the API and by the seed. */
export const buildOrder = (
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
    version: 1,
    ...(extra.cancelled_at ? { cancelled_at: extra.cancelled_at } : {}),
    ...(extra.payment_id ? { payment_id: extra.payment_id } : {}),
  };
};

/** The stored item: keys, list entry, the order; `history` for an imported order (the seed), which announces nothing. */
export const orderRecord = (merchantId: string, order: OrderItem, options: { history: boolean }) => ({
  ...orderKey(merchantId, order.uuid),
  ...primaryListEntry(merchantId, 'orders', ALL_BUCKET, order.seq),
  type: 'order',
  ...order,
  ...(options.history ? { history: true } : {}),
});

export const isOrderItem = (item: Record<string, unknown>): boolean => item.type === 'order';

/** The uuid of the order with this order_no: derived from it, so the order is its own guard (docs/architecture.md#uniqueness-and-races). */
export const orderUuidFor = (merchantId: string, orderNo: string): string => derivedUuid(merchantId, 'order_no', orderNo);

/** Puts a new order unless its key is taken; returns the order that holds it when it is (its `created_write_id` tells a retry's own). */
export const putNewOrder = async (db: TableRef, merchantId: string, order: OrderItem): Promise<OrderItem | undefined> => {
  try {
    await putItem(db, {
      Item: orderRecord(merchantId, order, { history: false }),
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    return undefined;
  } catch (error) {
    const old = refusedItem(error);
    if (old === undefined) throw error;
    return parseOrder(old);
  }
};

export const orderCountChange = (order: Pick<OrderItem, 'seq'>) => countChange('orders', ALL_BUCKET, order.seq);

/** Links the order to a payment (it can then not be cancelled); undefined when it is missing, cancelled or linked to another payment. */
export const linkOrderPayment = async (db: TableRef, merchantId: string, uuid: string, paymentId: string, now: string) => {
  const linked = await updateIfAllowed(db, {
    Key: orderKey(merchantId, uuid),
    UpdateExpression: 'SET payment_id = :payment, updated_at = :now',
    ConditionExpression:
      'attribute_exists(pk) AND attribute_not_exists(cancelled_at) AND (attribute_not_exists(payment_id) OR payment_id = :payment)',
    ExpressionAttributeValues: { ':payment': paymentId, ':now': now },
  });
  return linked && parseOrder(linked);
};

export const orderList = (merchantId: string): ListSpec<OrderItem> => ({
  merchantId,
  list: 'orders',
  buckets: [ALL_BUCKET],
  parse: parseOrder,
});

/** A conditional update of an order refused: `order` is the order as it was, absent when it does not exist. */
export class OrderUpdateRefused extends Error {
  override name = 'OrderUpdateRefused';
  constructor(readonly order: OrderItem | undefined) {
    super(order ? 'Order update refused by its condition' : 'Order does not exist');
  }
}

/** One conditional UpdateItem of an order, bumping its version, refused (OrderUpdateRefused) for a write id it carries already. */
export const updateOrder = async (
  db: TableRef,
  merchantId: string,
  uuid: string,
  update: { set: string; condition: string; values: Record<string, unknown> },
  writeId: string,
): Promise<OrderItem> => {
  const result = await updateOrRefused(db, {
    Key: orderKey(merchantId, uuid),
    // Every change adds 1 to the version the change feed announces (an order stored before versions counts as 1).
    UpdateExpression: `SET ${update.set}, last_write_id = :writeId, version = if_not_exists(version, :one) + :one`,
    ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(last_write_id) OR last_write_id <> :writeId) AND ${update.condition}`,
    ExpressionAttributeValues: { ...update.values, ':writeId': writeId, ':one': 1 },
  });
  if ('refused' in result) throw new OrderUpdateRefused(result.refused && parseOrder(result.refused));
  return parseOrder(result.item);
};
