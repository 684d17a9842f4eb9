import { TransactionCanceledException, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, TABLE_NAME } from '../db/client';
import { indexKeys, keys, padSeq } from '../db/keys';
import { GSI1 } from '../db/table-def';
import type { Merchant } from '../db/merchants';
import { busy, invalid, notFound, ruleRefused, type FieldErrors } from '../http/errors';
import type { PageQuery } from '../http/pagination';
import type { OrderCreateInput } from '../schemas/order';
import { isoNow, oneMonthBefore } from '../time';
import { isKnownCurrency } from './currency';
import { buildOrderItem, ORDER_MESSAGES, orderTransactItems, type OrderItem } from './order-model';

export { ORDER_MESSAGES, toOrderResponse, type OrderItem } from './order-model';

const checkCurrency = (merchant: Merchant, code: string) => {
  if (!isKnownCurrency(code)) throw invalid({ currency_code: [ORDER_MESSAGES.currencyInvalid] });
  if (code.toUpperCase() !== merchant.currency) throw invalid({ currency_code: [ORDER_MESSAGES.currencyMismatch(merchant.currency)] });
};

const readOrderCount = async (merchantId: string): Promise<number> => {
  const { Item } = await ddb.send(
    new GetCommand({ TableName: TABLE_NAME, Key: keys.merchant(merchantId), ProjectionExpression: 'orders_count', ConsistentRead: true }),
  );
  return (Item?.orders_count as number | undefined) ?? 0;
};

/**
 * Retry budget for sequence contention. Creates of one merchant serialise on its order counter
 * (the price of dense sequence numbers, i.e. constant-cost pages); losers back off with full
 * jitter and try again until the budget is spent, then get a 503 asking them to retry.
 */
const RETRY_BUDGET_MS = 8_000;
const backoff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(40, 5 * 2 ** attempt)));

export const createOrder = async (merchant: Merchant, input: OrderCreateInput, options: { pending?: boolean } = {}): Promise<OrderItem> => {
  checkCurrency(merchant, input.currency_code);
  const deadline = Date.now() + RETRY_BUDGET_MS;
  let count = await readOrderCount(merchant.id);
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const order = buildOrderItem(input, { seq: count + 1 });
    try {
      await ddb.send(new TransactWriteCommand({ TransactItems: orderTransactItems(TABLE_NAME, merchant.id, order, count, { pending: options.pending ?? true }) }));
      return order;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const reasons = error.CancellationReasons ?? [];
      const codes = reasons.map((reason) => reason.Code);
      const errors: FieldErrors = {};
      if (codes[0] === 'ConditionalCheckFailed') errors.affiliate_slug = [ORDER_MESSAGES.affiliateInvalid];
      if (codes[1] === 'ConditionalCheckFailed') errors.order_no = [ORDER_MESSAGES.orderNoTaken];
      if (Object.keys(errors).length > 0) throw invalid(errors);
      const current = reasons[2]?.Item?.orders_count?.N;
      count = current !== undefined ? Number(current) : await readOrderCount(merchant.id);
      await backoff(attempt);
    }
  }
  throw busy();
};

export const getOrder = async (merchantId: string, uuid: string): Promise<OrderItem> => {
  const { Item } = await ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: keys.order(merchantId, uuid) }));
  if (!Item) throw notFound();
  return Item as OrderItem;
};

/**
 * Newest first. Orders are never deleted and carry a dense sequence number, so page N is one key
 * range on gsi1: one GetItem (the count) and one Query, whatever N is (the Query continues past
 * DynamoDB's 1 MB page only for pages of very large orders).
 */
export const listOrders = async (merchantId: string, query: PageQuery): Promise<{ total: number; orders: OrderItem[] }> => {
  const total = await readOrderCount(merchantId);
  const newest = total - (query.page - 1) * query.per_page;
  if (newest < 1) return { total, orders: [] };
  const oldest = Math.max(1, newest - query.per_page + 1);
  const orders: OrderItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const { Items = [], LastEvaluatedKey } = await ddb.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        IndexName: GSI1.indexName,
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :oldest AND :newest',
        ExpressionAttributeValues: { ':pk': indexKeys.orderSequencePartition(merchantId), ':oldest': padSeq(oldest), ':newest': padSeq(newest) },
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      }),
    );
    orders.push(...(Items as OrderItem[]));
    startKey = LastEvaluatedKey;
  } while (startKey);
  return { total, orders };
};

/** A conditional update whose failure is explained by the item as it was (ALL_OLD). */
const conditionalUpdate = async (
  key: { pk: string; sk: string },
  update: { expression: string; condition: string; values: Record<string, unknown> },
  explain: (old: OrderItem) => Error,
): Promise<OrderItem> => {
  try {
    const { Attributes } = await ddb.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: key,
        UpdateExpression: update.expression,
        ConditionExpression: `attribute_exists(pk) AND ${update.condition}`,
        ExpressionAttributeValues: update.values,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return Attributes as OrderItem;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    if (!error.Item) throw notFound();
    // The document client does not unmarshall exceptions: the old item arrives in wire format.
    throw explain(unmarshall(error.Item) as OrderItem);
  }
};

/** Replaces total_shipping_value, and nothing else, on an order that is not cancelled. */
export const updateShipping = (merchantId: string, uuid: string, totalShippingValue: number) =>
  conditionalUpdate(
    keys.order(merchantId, uuid),
    {
      expression: 'SET total_shipping_value = :value, updated_at = :now',
      condition: 'attribute_not_exists(cancelled_at)',
      values: { ':value': totalShippingValue, ':now': isoNow() },
    },
    () => ruleRefused(ORDER_MESSAGES.cancelledNotUpdatable),
  );

/**
 * Cancels an order. Every rule is a condition on the write, so of concurrent cancels exactly one
 * succeeds; a refusal names the first rule the order breaks.
 */
export const cancelOrder = (merchantId: string, uuid: string, now: Date = new Date()) => {
  const cutoff = oneMonthBefore(now).toISOString();
  return conditionalUpdate(
    keys.order(merchantId, uuid),
    {
      expression: 'SET cancelled_at = :now, updated_at = :now',
      condition: 'attribute_not_exists(cancelled_at) AND attribute_not_exists(payment_id) AND created_at >= :cutoff',
      values: { ':now': now.toISOString(), ':cutoff': cutoff },
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
};
