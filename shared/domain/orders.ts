import { functionTable } from '#shared/db/client';
import { getAffiliate } from '#shared/db/entities/affiliate';
import { applyCountChanges, takeSequence } from '#shared/db/entities/counter';
import { upsertCustomer } from '#shared/db/entities/customer';
import {
  buildOrder,
  type OrderItem,
  OrderUpdateRefused,
  orderCountChange,
  orderList,
  putOrderPart,
  getOrder as readOrder,
  updateOrder,
} from '#shared/db/entities/order';
import { orderNoTaken, putOrderNoPart } from '#shared/db/entities/order-no';
import type { Merchant } from '#shared/db/merchants';
import { readPage } from '#shared/db/pages';
import { withConflictRetry } from '#shared/db/retry';
import { TransactionRefused, transactWrite } from '#shared/db/transact';
import { type FieldErrors, invalid, notFound, ruleRefused } from '#shared/errors';
import { logger } from '#shared/logger';
import type { PageQuery } from '#shared/page-window';
import type { OrderCreateInput } from '#shared/schemas/order';
import { isoNow, oneMonthBefore } from '#shared/time';
import { isKnownCurrency } from './currency';
import { ORDER_MESSAGES } from './order-model';

export type { OrderItem } from '#shared/db/entities/order';
export { ORDER_MESSAGES, toOrderResponse } from './order-model';

const checkCurrency = (merchant: Merchant, code: string) => {
  if (!isKnownCurrency(code)) throw invalid({ currency_code: [ORDER_MESSAGES.currencyInvalid] });
  if (code.toUpperCase() !== merchant.currency) throw invalid({ currency_code: [ORDER_MESSAGES.currencyMismatch(merchant.currency)] });
};

/**
 * Creates an order. Nothing that every create of a merchant, of one affiliate or of one customer
 * touches is in the transaction (DESIGN.md, "No hot item in a transaction"):
 *
 * 1. reads, in parallel: the affiliate (consistent: it must be active) and the order_no guard (a
 *    taken order_no is refused before a sequence number is spent);
 * 2. the order's sequence number from the merchant's order counter: one atomic ADD, never a conflict;
 * 3. ONE transaction of what belongs to this request only: the order (with its outbox entry) and
 *    its order_no guard (attribute_not_exists: of racing creates with one order_no exactly one
 *    commits, the others get 422). A conflict on the guard is retried, then 503;
 * 4. after the commit, in parallel and idempotently: +1 on the order list's block count, and the
 *    customer's upsert. The order is durable by then: a failure here is logged, never a 500.
 *
 * A create that loses the order_no race leaves its sequence number unused; the list counts only
 * committed orders, so pages show no gap and the total stays exact.
 */
export const createOrder = async (merchant: Merchant, input: OrderCreateInput): Promise<OrderItem> => {
  checkCurrency(merchant, input.currency_code);
  const db = functionTable;
  const [affiliate, taken] = await Promise.all([
    getAffiliate(db, merchant.id, input.affiliate_slug, true),
    orderNoTaken(db, merchant.id, input.order_no),
  ]);
  const errors: FieldErrors = {};
  if (affiliate?.status !== 'active') errors.affiliate_slug = [ORDER_MESSAGES.affiliateInvalid];
  if (taken) errors.order_no = [ORDER_MESSAGES.orderNoTaken];
  if (Object.keys(errors).length > 0) throw invalid(errors);

  const order = buildOrder(input, { seq: await takeSequence(db, merchant.id, 'orders') });
  try {
    await withConflictRetry(() =>
      transactWrite(db, {
        order: putOrderPart(merchant.id, order, { queued: true }),
        orderNo: putOrderNoPart(merchant.id, order.order_no, order.uuid),
      }),
    );
  } catch (error) {
    if (error instanceof TransactionRefused && error.refusedBy('orderNo')) throw invalid({ order_no: [ORDER_MESSAGES.orderNoTaken] });
    throw error;
  }
  const settled = await Promise.allSettled([
    applyCountChanges(db, merchant.id, [orderCountChange(order)]),
    order.customer ? upsertCustomer(db, merchant.id, order.customer, order.created_at) : Promise.resolve(),
  ]);
  for (const result of settled) {
    if (result.status === 'rejected')
      logger.error('Order committed; a follow-up write failed', { order_uuid: order.uuid, error: result.reason as Error });
  }
  return order;
};

export const getOrder = async (merchantId: string, uuid: string): Promise<OrderItem> => {
  const order = await readOrder(functionTable, merchantId, uuid);
  if (!order) throw notFound();
  return order;
};

/** Newest first; page N costs what page 1 costs (see db/pages.ts). */
export const listOrders = async (merchantId: string, query: PageQuery): Promise<{ total: number; orders: OrderItem[] }> => {
  const { total, items } = await readPage(functionTable, orderList(merchantId), query);
  return { total, orders: items };
};

/**
 * A conditional update of one order, retried on conflict; a refusal is a 404 when the order does
 * not exist, else what `explain` says about the order as it was.
 */
const changeOrder = async (
  merchantId: string,
  uuid: string,
  update: Parameters<typeof updateOrder>[3],
  explain: (old: OrderItem) => Error,
): Promise<OrderItem> => {
  try {
    return await withConflictRetry(() => updateOrder(functionTable, merchantId, uuid, update));
  } catch (error) {
    if (!(error instanceof OrderUpdateRefused)) throw error;
    throw error.order ? explain(error.order) : notFound();
  }
};

/** Replaces total_shipping_value, and nothing else, on an order that is not cancelled. */
export const updateShipping = (merchantId: string, uuid: string, totalShippingValue: number) =>
  changeOrder(
    merchantId,
    uuid,
    {
      set: 'total_shipping_value = :value, updated_at = :now',
      condition: 'attribute_not_exists(cancelled_at)',
      values: { ':value': totalShippingValue, ':now': isoNow() },
    },
    () => ruleRefused(ORDER_MESSAGES.cancelledNotUpdatable),
  );

/**
 * Cancels an order. Every rule is a condition on the write, so of concurrent cancels exactly one
 * succeeds; a refusal names the first rule the order breaks.
 */
export const cancelOrder = (merchantId: string, uuid: string, now: Date = new Date()) =>
  changeOrder(
    merchantId,
    uuid,
    {
      set: 'cancelled_at = :now, updated_at = :now',
      condition: 'attribute_not_exists(cancelled_at) AND attribute_not_exists(payment_id) AND created_at >= :cutoff',
      values: { ':now': now.toISOString(), ':cutoff': oneMonthBefore(now).toISOString() },
    },
    (old) =>
      ruleRefused(
        old.cancelled_at
          ? ORDER_MESSAGES.alreadyCancelled
          : old.payment_id
            ? ORDER_MESSAGES.linkedToPayment
            : ORDER_MESSAGES.tooOldToCancel,
      ),
  );
