import { functionTable } from '../db/client';
import { getAffiliate, type AffiliateItem } from '../db/entities/affiliate';
import { putCommissionIfAbsent } from '../db/entities/commission';
import { getOrder, type OrderItem } from '../db/entities/order';
import { allSegments, type SegmentItem } from '../db/entities/segment';
import type { OrderAcceptedMessage } from '../queue/orders';
import { rowCommission, sumExact } from '../money';
import { isoNow } from '../time';

/**
 * Commission processing for accepted orders (minimal until the commission issue): one record per
 * order, written with a conditional put, so a message delivered twice counts once.
 *
 * Per row: the segment whose `slugs` contain the row's segment_slug (case-insensitive), else the
 * merchant's default segment; rate = segment.rates[affiliate tier] ?? 0 (percent);
 * amount = round(price_value * quantity * rate / 100). Shipping and tax carry no commission.
 * A cancelled order gets a `void` record with zero amounts.
 */

export type CommissionRow = { row_uuid: string; segment_uuid: string | null; rate: number; base_value: number; amount: number };

export type CommissionItem = {
  type: 'commission';
  order_uuid: string;
  order_no: string;
  affiliate_slug: string;
  tier_slug: string | null;
  currency_code: string;
  rows: CommissionRow[];
  total_amount: number;
  status: 'pending' | 'void';
  order_created_at: string;
  created_at: string;
};

type SegmentRates = Pick<SegmentItem, 'uuid' | 'slugs' | 'rates' | 'is_default'>;

/** The segment a row's commission comes from: slug match first, else the default segment. */
export const segmentForRow = (segments: readonly SegmentRates[], segmentSlug: string | null): SegmentRates | undefined => {
  const slug = segmentSlug?.trim().toLowerCase();
  const matched = slug ? segments.find((segment) => segment.slugs.some((candidate) => candidate.toLowerCase() === slug)) : undefined;
  return matched ?? segments.find((segment) => segment.is_default);
};

export const computeCommission = (
  order: Pick<OrderItem, 'uuid' | 'order_no' | 'affiliate_slug' | 'currency_code' | 'order_rows' | 'created_at' | 'cancelled_at'>,
  segments: readonly SegmentRates[],
  affiliate: Pick<AffiliateItem, 'tier_slug'> | undefined,
  now: string = isoNow(),
): CommissionItem => {
  const tier = affiliate?.tier_slug ?? null;
  const void_ = Boolean(order.cancelled_at);
  const rows = order.order_rows.map((row): CommissionRow => {
    const segment = segmentForRow(segments, row.segment_slug);
    // Issue 13: rates are looked up as own keys only (a tier slug is data), and computed exactly
    // (shared/money.ts); an amount that cannot be computed exactly throws AmountNotComputableError.
    const rate = (tier !== null && segment && Object.hasOwn(segment.rates, tier) ? segment.rates[tier] : undefined) ?? 0;
    const { base, amount } = rowCommission(row.price_value, row.quantity, rate);
    return { row_uuid: row.uuid, segment_uuid: segment?.uuid ?? null, rate, base_value: base, amount: void_ ? 0 : amount };
  });
  return {
    type: 'commission',
    order_uuid: order.uuid,
    order_no: order.order_no,
    affiliate_slug: order.affiliate_slug,
    tier_slug: tier,
    currency_code: order.currency_code,
    rows,
    total_amount: sumExact(rows.map((row) => row.amount)),
    status: void_ ? 'void' : 'pending',
    order_created_at: order.created_at,
    created_at: now,
  };
};

/** The queue message, or undefined when the body is not an order.accepted message. */
export const parseOrderAccepted = (body: string): OrderAcceptedMessage | undefined => {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const message = value as Record<string, unknown>;
  if (message.type !== 'order.accepted') return undefined;
  if (typeof message.merchant_id !== 'string' || message.merchant_id === '') return undefined;
  if (typeof message.order_uuid !== 'string' || message.order_uuid === '') return undefined;
  return { type: 'order.accepted', merchant_id: message.merchant_id, order_uuid: message.order_uuid };
};

/** A message that can never succeed (unknown order): retrying does not help, the DLQ keeps it. */
export class UnprocessableMessageError extends Error {
  override name = 'UnprocessableMessageError';
}

export type CommissionOutcome = { outcome: 'recorded' | 'duplicate'; commission: CommissionItem };

/**
 * Records the commission of one accepted order: GetItem order (consistent), GetItem affiliate and
 * Query segments, then one conditional PutItem. A record that already exists (a redelivered or
 * relayed duplicate) is left untouched and reported as `duplicate`.
 */
export const recordOrderCommission = async (merchantId: string, orderUuid: string): Promise<CommissionOutcome> => {
  const order = await getOrder(functionTable, merchantId, orderUuid, true);
  if (!order) throw new UnprocessableMessageError(`Order ${orderUuid} does not exist`);
  const [segments, affiliate] = await Promise.all([allSegments(functionTable, merchantId), getAffiliate(functionTable, merchantId, order.affiliate_slug)]);
  const commission = computeCommission(order, segments, affiliate);
  const written = await putCommissionIfAbsent(functionTable, merchantId, orderUuid, commission);
  return { outcome: written ? 'recorded' : 'duplicate', commission };
};
