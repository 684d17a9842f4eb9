import { functionTable } from '#shared/db/client';
import { type AffiliateItem, getAffiliate } from '#shared/db/entities/affiliate';
import {
  type CommissionLedger,
  type CommissionRow,
  getCommissionLedger,
  type LedgerEntry,
  putCommissionLedger,
} from '#shared/db/entities/commission';
import { getOrder, type OrderItem } from '#shared/db/entities/order';
import { allSegments, type SegmentItem } from '#shared/db/entities/segment';
import { netExact, rowCommission, sumExact } from '#shared/money';
import { isoNow } from '#shared/time';
import { eventTypeOf, versionOf } from './order-events';

export type { CommissionLedger } from '#shared/db/entities/commission';

/** What an accrual books: each row's commission, their total, and the affiliate tier they were computed for. */
type Accrual = { tier_slug: string | null; rows: CommissionRow[]; total_amount: number };

type SegmentRates = Pick<SegmentItem, 'uuid' | 'slugs' | 'rates' | 'is_default'>;

/** The segment a row's commission comes from: slug match first, else the default segment. */
export const segmentForRow = (segments: readonly SegmentRates[], segmentSlug: string | null): SegmentRates | undefined => {
  const slug = segmentSlug?.trim().toLowerCase();
  const matched = slug ? segments.find((segment) => segment.slugs.some((candidate) => candidate.toLowerCase() === slug)) : undefined;
  return matched ?? segments.find((segment) => segment.is_default);
};

export const computeCommission = (
  order: Pick<OrderItem, 'order_rows'>,
  segments: readonly SegmentRates[],
  affiliate: Pick<AffiliateItem, 'tier_slug'> | undefined,
): Accrual => {
  const tier = affiliate?.tier_slug ?? null;
  const rows = order.order_rows.map((row): CommissionRow => {
    const segment = segmentForRow(segments, row.segment_slug);
    // Own keys only (a tier slug is data); computed exactly or AmountNotComputableError (shared/money.ts).
    const rate = (tier !== null && segment && Object.hasOwn(segment.rates, tier) ? segment.rates[tier] : undefined) ?? 0;
    const { base, amount } = rowCommission(row.price_value, row.quantity, rate);
    return { row_uuid: row.uuid, segment_uuid: segment?.uuid ?? null, rate, base_value: base, amount };
  });
  return { tier_slug: tier, rows, total_amount: sumExact(rows.map((row) => row.amount)) };
};

/** A message that cannot succeed as it stands (an unknown order): moved to the DLQ at once, not redelivered. */
export class PermanentMessageError extends Error {
  override name = 'PermanentMessageError';
}

type LedgerOrder = Pick<OrderItem, 'uuid' | 'order_no' | 'affiliate_slug' | 'currency_code' | 'cancelled_at' | 'version'>;

/** Brings a ledger up to the order's current version, one version at a time (pure); `accrual` is needed only when one is booked. */
export const advanceLedger = (
  ledger: CommissionLedger | undefined,
  order: LedgerOrder,
  accrual: Accrual | undefined,
  now: string = isoNow(),
): { ledger: CommissionLedger; booked: LedgerEntry[] } => {
  const current = versionOf(order);
  const entries = [...(ledger?.entries ?? [])];
  const booked: LedgerEntry[] = [];
  let status = ledger?.status ?? 'pending';
  let rows = ledger?.rows ?? [];
  let tier = ledger?.tier_slug ?? null;
  const book = (type: LedgerEntry['type'], amount: number, version: number) => {
    const entry = { type, amount, at: now, version };
    entries.push(entry);
    booked.push(entry);
  };
  for (let version = (ledger?.applied_version ?? 0) + 1; version <= current; version++) {
    const type = eventTypeOf(order, version);
    if (type === 'order.created') {
      if (order.cancelled_at !== undefined) continue;
      if (!accrual) throw new Error('advanceLedger: an accrual is due but no commission was computed');
      rows = accrual.rows;
      tier = accrual.tier_slug;
      book('accrual', accrual.total_amount, version);
    } else if (type === 'order.updated') {
      book('shipping_change', 0, version);
    } else {
      if (entries.some((entry) => entry.type === 'accrual')) book('reversal', -netExact(entries.map((entry) => entry.amount)), version);
      status = 'void';
    }
  }
  return {
    ledger: {
      order_uuid: order.uuid,
      order_no: order.order_no,
      affiliate_slug: order.affiliate_slug,
      tier_slug: tier,
      currency_code: order.currency_code,
      status,
      rows,
      entries,
      net_amount: netExact(entries.map((entry) => entry.amount)),
      applied_version: Math.max(current, ledger?.applied_version ?? 0),
      created_at: ledger?.created_at ?? now,
      updated_at: now,
    },
    booked,
  };
};

export type LedgerOutcome = { outcome: 'applied' | 'duplicate'; ledger: CommissionLedger | undefined; booked: LedgerEntry[] };

/** Reads and conditional writes before giving up on a ledger other deliveries keep changing (SQS redelivers). */
export const LEDGER_ATTEMPTS = 5;

/** Applies the order's changes its ledger lacks in one conditional PutItem, retried from fresh reads (docs/architecture.md#commission-processing). */
export const applyOrderChanges = async (merchantId: string, orderUuid: string, announcedVersion?: number): Promise<LedgerOutcome> => {
  const read = (consistent: boolean, ledgerAbsent: boolean) =>
    Promise.all([
      getOrder(functionTable, merchantId, orderUuid, consistent),
      ledgerAbsent
        ? { ledger: undefined, stamp: { kind: 'absent' } as const }
        : getCommissionLedger(functionTable, merchantId, orderUuid, consistent),
    ]);
  for (let attempt = 1; attempt <= LEDGER_ATTEMPTS; attempt++) {
    const strongly = attempt > 1 || announcedVersion === undefined;
    const ledgerAbsent = attempt === 1 && announcedVersion === 1;
    let [order, { ledger, stamp }] = await read(strongly, ledgerAbsent);
    if (!strongly && (!order || versionOf(order) < announcedVersion)) [order, { ledger, stamp }] = await read(true, ledgerAbsent);
    if (!order) throw new PermanentMessageError(`Order ${orderUuid} does not exist`);
    if (ledger && ledger.applied_version >= versionOf(order)) return { outcome: 'duplicate', ledger, booked: [] };
    let accrual: Accrual | undefined;
    // Bringing the ledger up to date books an accrual: the commission is computed.
    if ((ledger?.applied_version ?? 0) < 1 && order.cancelled_at === undefined) {
      const [segments, affiliate] = await Promise.all([
        allSegments(functionTable, merchantId),
        getAffiliate(functionTable, merchantId, order.affiliate_slug),
      ]);
      accrual = computeCommission(order, segments, affiliate);
    }
    const next = advanceLedger(ledger, order, accrual);
    if (await putCommissionLedger(functionTable, merchantId, next.ledger, stamp)) return { outcome: 'applied', ...next };
  }
  throw new Error(`Commission ledger of order ${orderUuid} kept changing under ${LEDGER_ATTEMPTS} attempts; SQS will redeliver`);
};
