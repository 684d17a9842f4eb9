import { functionTable } from '#shared/db/client';
import { getAffiliate } from '#shared/db/entities/affiliate';
import {
  applyCountChanges,
  BLOCK_SIZE,
  blockOf,
  isDerivedNumber,
  leaveOrderNumberUnused,
  markCountsForRecount,
  takeOrderSequenceNumbers,
} from '#shared/db/entities/counter';
import { RECORD_TTL_SECONDS } from '#shared/db/entities/idempotency';
import {
  buildOrder,
  type OrderItem,
  OrderUpdateRefused,
  orderCountChange,
  orderList,
  orderUuidFor,
  putNewOrder,
  getOrder as readOrder,
  updateOrder,
} from '#shared/db/entities/order';
import { orderNoHolder } from '#shared/db/entities/order-no';
import { deriveOrderCountsFrom, type OrderNumber } from '#shared/db/entities/quota';
import type { Merchant } from '#shared/db/merchants';
import { readPage } from '#shared/db/pages';
import { withWriteRetry } from '#shared/db/retry';
import { type FieldErrors, invalid, invalidField, notFound, orNotFound, ruleRefused } from '#shared/errors';
import type { ApiRequest } from '#shared/http/api-handler';
import type { Schemas } from '#shared/http/validate';
import { logger } from '#shared/logger';
import type { PageQuery } from '#shared/page-window';
import type { RequestIdentity } from '#shared/request-identity';
import type { OrderCreateInput } from '#shared/schemas/order';
import { isoNow, oneMonthBefore } from '#shared/time';
import { isKnownCurrency } from './currency';
import { ORDER_MESSAGES } from './order-model';

export { toOrderResponse } from './order-model';

type CreateSteps = Pick<ApiRequest<Schemas>, 'identity' | 'decided' | 'admitted' | 'alongside'>;

/** The affiliate an order names: read eventually consistently, and strongly only when not seen active (one accepted a moment ago). */
const attributableAffiliate = async (merchantId: string, slug: string) => {
  const seen = await getAffiliate(functionTable, merchantId, slug);
  return seen?.status === 'active' ? seen : getAffiliate(functionTable, merchantId, slug, true);
};

/** Creates an order: reads and the quota's decision in parallel, then one conditional put (docs/architecture.md#writing-without-hot-items). */
export const createOrder = async (
  merchant: Merchant,
  input: OrderCreateInput,
  { identity, decided, admitted, alongside }: CreateSteps,
): Promise<OrderItem> => {
  const currency = input.currency_code;
  if (!isKnownCurrency(currency)) throw invalidField('currency_code', ORDER_MESSAGES.currencyInvalid);
  if (currency.toUpperCase() !== merchant.currency) throw invalidField('currency_code', ORDER_MESSAGES.currencyMismatch(merchant.currency));
  const db = functionTable;
  // Numbered as soon as the quota decided, not after a key's claim: a replay found then leaves the number unused.
  const numbered = decided().then(({ orderNumber }) => orderNumber ?? takeOrderSequenceNumbers(db, merchant.id));
  // Whether the number may name an order: from the put on, unless the put was refused.
  let used = false;
  try {
    const [affiliate, legacyHolder, number] = await Promise.all([
      attributableAffiliate(merchant.id, input.affiliate_slug),
      orderNoHolder(db, merchant.id, input.order_no),
      numbered,
      admitted(),
    ]);
    const errors: FieldErrors = {};
    if (affiliate?.status !== 'active') errors.affiliate_slug = [ORDER_MESSAGES.affiliateInvalid];
    if (legacyHolder !== undefined) errors.order_no = [ORDER_MESSAGES.orderNoTaken];
    if (legacyHolder !== undefined) await recountIfRecent(merchant.id, legacyHolder);
    if (Object.keys(errors).length > 0) throw invalid(errors);

    const order: OrderItem = {
      ...buildOrder(input, { uuid: orderUuidFor(merchant.id, input.order_no), seq: number.seq }),
      last_write_id: identity.writeId,
      created_write_id: identity.writeId,
    };
    used = true;
    const holder = await withWriteRetry(() => putNewOrder(db, merchant.id, order)).catch(async (error: unknown) => {
      // A put that failed may still have been applied: read back, its number is unused only if its order is not there.
      used = (await storedOrUnknown(merchant.id, order, identity)) !== false;
      throw error;
    });
    // A holder with this number is this request's own put, applied by an attempt whose answer was lost.
    used = holder === undefined || holder.seq === number.seq;
    // A retry of a create whose order was stored: whether it was counted is unknown, so its block is marked for recount.
    if (holder !== undefined && createdBy(holder, identity)) {
      await settleCreate(holder, markCountsForRecount(db, merchant.id, [orderCountChange(holder)]));
      return holder;
    }
    if (holder !== undefined) {
      await recountIfRecent(merchant.id, holder);
      throw invalid({ order_no: [ORDER_MESSAGES.orderNoTaken] });
    }
    // The count goes out beside the recording of the answer (an Idempotency-Key's record), which it never changes.
    if (!isDerivedNumber(number)) alongside(settleCreate(order, countCreate(merchant.id, order, number)));
    return order;
  } finally {
    if (!used) alongside(leaveUnused(merchant.id, numbered));
  }
};

/** The count of a create numbered before derived counts: its block's `ADD`; on a sequence without them, they start at the next block. */
const countCreate = (merchantId: string, order: OrderItem, number: OrderNumber) =>
  Promise.all([
    applyCountChanges(functionTable, merchantId, [orderCountChange(order)]),
    number.derivedFrom === undefined ? deriveOrderCountsFrom(functionTable, merchantId, (blockOf(number.seq) + 1) * BLOCK_SIZE) : undefined,
  ]).then(() => undefined);

/** The number a create took and stores no order under, noted as its block's hole (none taken: nothing). Logged, never thrown. */
const leaveUnused = async (merchantId: string, numbered: Promise<OrderNumber>) => {
  const number = await numbered.catch(() => undefined);
  if (number === undefined) return;
  await leaveOrderNumberUnused(functionTable, merchantId, number).catch((error: unknown) =>
    logger.warn('An order number left unused could not be noted; its block is recounted once closed', {
      seq: number.seq,
      error: error as Error,
    }),
  );
};

/** Whether this request created the order (its answer lost), within an Idempotency-Key's life: a key used after that is a new request. */
const createdBy = (holder: OrderItem, identity: RequestIdentity) =>
  (holder.created_write_id ?? holder.last_write_id) === identity.writeId &&
  Date.now() - Date.parse(holder.created_at) < RECORD_TTL_SECONDS * 1000;

/** The order under `uuid` if this request created it (a consistent read), else undefined. */
const ownOrder = async (merchantId: string, uuid: string, identity: RequestIdentity): Promise<OrderItem | undefined> => {
  const found = await readOrder(functionTable, merchantId, uuid, true);
  return found && createdBy(found, identity) ? found : undefined;
};

/** A keyed create's first answer, `reply` of the order its request created, or undefined while there is none: a retry's answer. */
export const replyFromCreatedOrder =
  <R>(reply: (order: OrderItem) => R) =>
  async ({ merchantId, body, identity }: { merchantId: string; body: { order_no: string }; identity: RequestIdentity }) => {
    const order = await ownOrder(merchantId, orderUuidFor(merchantId, body.order_no), identity);
    return order && reply(order);
  };

/** After a failed put: whether this request's order is stored, undefined when that cannot be read. */
const storedOrUnknown = (merchantId: string, order: OrderItem, identity: RequestIdentity): Promise<boolean | undefined> =>
  ownOrder(merchantId, order.uuid, identity)
    .then((found) => found !== undefined)
    .catch(() => undefined);

/** The create's count change after its commit (applied, or marked for recount): logged when it fails, never thrown. */
const settleCreate = (order: OrderItem, counted: Promise<void>) =>
  counted.catch((error: unknown) =>
    logger.error('Order committed; its list count could not be kept', { order_uuid: order.uuid, error: error as Error }),
  );

/** How long after its create an order's count may still be missing (its request stopped after the commit). */
const RECENT_CREATE_SECONDS = 60 * 60;

/** An order_no taken by a recent order (likely a retry stopped before its count): the holder's block is marked for recount, never thrown. */
const recountIfRecent = async (merchantId: string, holderOrUuid: OrderItem | string) => {
  try {
    // The order that refused a put came back with the refusal; a guard names only its uuid.
    const holder = typeof holderOrUuid === 'string' ? await readOrder(functionTable, merchantId, holderOrUuid) : holderOrUuid;
    if (holder && Date.now() - Date.parse(holder.created_at) < RECENT_CREATE_SECONDS * 1000)
      await markCountsForRecount(functionTable, merchantId, [orderCountChange(holder)]);
  } catch (error) {
    logger.warn('Could not mark the block of a recent order whose order_no was sent again for recount', { error: error as Error });
  }
};

/** A consistent read: an order is found right after its 201 and shows its last PATCH or cancel. */
export const getOrder = (merchantId: string, uuid: string): Promise<OrderItem> =>
  orNotFound(readOrder(functionTable, merchantId, uuid, true));

/** Newest first; page N costs what page 1 costs (shared/db/pages.ts). */
export const listOrders = async (merchantId: string, query: PageQuery): Promise<{ total: number; orders: OrderItem[] }> => {
  const { total, items } = await readPage(functionTable, orderList(merchantId), query);
  return { total, orders: items };
};

/** A conditional update of one order, retried on conflict; a refusal is a 404, or what `explain` says about the order as it was. */
const changeOrder = async (
  merchantId: string,
  uuid: string,
  update: Parameters<typeof updateOrder>[3],
  identity: RequestIdentity,
  explain: (old: OrderItem) => Error,
): Promise<OrderItem> => {
  try {
    return await withWriteRetry(() => updateOrder(functionTable, merchantId, uuid, update, identity.writeId));
  } catch (error) {
    if (!(error instanceof OrderUpdateRefused)) throw error;
    // This request's own change, applied by an attempt whose answer was lost.
    if (error.order?.last_write_id === identity.writeId) return error.order;
    throw error.order ? explain(error.order) : notFound();
  }
};

/** Replaces total_shipping_value, and nothing else, on an order that is not cancelled. */
export const updateShipping = (merchantId: string, uuid: string, totalShippingValue: number, identity: RequestIdentity) =>
  changeOrder(
    merchantId,
    uuid,
    {
      set: 'total_shipping_value = :value, updated_at = :now',
      condition: 'attribute_not_exists(cancelled_at)',
      values: { ':value': totalShippingValue, ':now': isoNow() },
    },
    identity,
    () => ruleRefused(ORDER_MESSAGES.cancelledNotUpdatable),
  );

/** Cancels an order: each rule is a condition on the write, so one of concurrent cancels wins; a refusal names the first rule broken. */
export const cancelOrder = (merchantId: string, uuid: string, identity: RequestIdentity, now: Date = new Date()) =>
  changeOrder(
    merchantId,
    uuid,
    {
      set: 'cancelled_at = :now, updated_at = :now',
      condition: 'attribute_not_exists(cancelled_at) AND attribute_not_exists(payment_id) AND created_at >= :cutoff',
      values: { ':now': now.toISOString(), ':cutoff': oneMonthBefore(now).toISOString() },
    },
    identity,
    (old) =>
      ruleRefused(
        old.cancelled_at
          ? ORDER_MESSAGES.alreadyCancelled
          : old.payment_id
            ? ORDER_MESSAGES.linkedToPayment
            : ORDER_MESSAGES.tooOldToCancel,
      ),
  );
