import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import { getStored, itemKey, type Key, nullableString, parseStored, putItem, writeApplied } from './base';

/** The commission ledger of one order: every write is conditional on the one read, so no order version is applied twice. */
export const commissionKey = (merchantId: string, orderUuid: string): Key => itemKey(merchantId, `COMMISSION#${orderUuid}`);

export const LEDGER_ENTRY_TYPES = ['accrual', 'reversal', 'shipping_change'] as const;

const entrySchema = z.object({ type: z.enum(LEDGER_ENTRY_TYPES), amount: z.number(), at: z.string(), version: z.number() });
export type LedgerEntry = z.output<typeof entrySchema>;

const rowSchema = z.object({
  row_uuid: z.string(),
  segment_uuid: nullableString(),
  rate: z.number(),
  base_value: z.number(),
  amount: z.number(),
});
export type CommissionRow = z.output<typeof rowSchema>;

const ledgerSchema = z.object({
  order_uuid: z.string(),
  order_no: z.string(),
  affiliate_slug: z.string(),
  tier_slug: nullableString(),
  currency_code: z.string(),
  status: z.enum(['pending', 'void']),
  /** How the accrual was computed, row by row (empty when nothing was ever accrued). */
  rows: z.array(rowSchema),
  created_at: z.string(),
  // Absent on a record of the processor before the ledger (one record per order, see below).
  entries: z.optional(z.array(entrySchema)),
  net_amount: z.optional(z.number()),
  applied_version: z.optional(z.number()),
  updated_at: z.optional(z.string()),
  total_amount: z.optional(z.number()),
});

type StoredLedger = z.output<typeof ledgerSchema>;
type LedgerFields = 'entries' | 'net_amount' | 'applied_version' | 'updated_at';
/** A ledger as read: every ledger field present (readLedger), the total of a record from before the ledger gone. */
export type CommissionLedger = Omit<StoredLedger, LedgerFields | 'total_amount'> & Required<Pick<StoredLedger, LedgerFields>>;

/** What the next write of a ledger is conditional on: the state it was read in. */
type LedgerStamp = { kind: 'absent' } | { kind: 'before-ledger' } | { kind: 'applied'; version: number };

/** A stored ledger item as a ledger and its stamp; a record from before the ledger reads as its accrual applied at version 1. */
const readLedger = (item: StoredLedger): { ledger: CommissionLedger; stamp: LedgerStamp } => {
  const { entries, net_amount, applied_version, updated_at, total_amount, ...stored } = item;
  if (entries === undefined || applied_version === undefined) {
    const accrued =
      stored.status === 'pending' ? [{ type: 'accrual' as const, amount: total_amount ?? 0, at: stored.created_at, version: 1 }] : [];
    const ledger = { ...stored, entries: accrued, net_amount: accrued[0]?.amount ?? 0, applied_version: 1, updated_at: stored.created_at };
    return { ledger, stamp: { kind: 'before-ledger' } };
  }
  const ledger = { ...stored, entries, net_amount: net_amount ?? 0, applied_version, updated_at: updated_at ?? stored.created_at };
  return { ledger, stamp: { kind: 'applied', version: applied_version } };
};

/** A ledger as the table's stream carries it (the change feed's webhook events read its entries). */
export const parseCommissionLedgerImage = (image: unknown) => readLedger(parseStored('commission', ledgerSchema, image)).ledger;

export const getCommissionLedger = async (
  db: TableRef,
  merchantId: string,
  orderUuid: string,
  consistent = false,
): Promise<{ ledger: CommissionLedger | undefined; stamp: LedgerStamp }> => {
  const item = await getStored(db, 'commission', ledgerSchema, commissionKey(merchantId, orderUuid), consistent);
  return item ? readLedger(item) : { ledger: undefined, stamp: { kind: 'absent' } };
};

const CONDITION: Record<LedgerStamp['kind'], string> = {
  absent: 'attribute_not_exists(pk)',
  'before-ledger': 'attribute_exists(pk) AND attribute_not_exists(applied_version)',
  applied: 'applied_version = :applied',
};

/** Writes the ledger whole if it is still as it was read (`stamp`); false when another delivery changed it first. */
export const putCommissionLedger = (db: TableRef, merchantId: string, ledger: CommissionLedger, stamp: LedgerStamp) =>
  writeApplied(
    putItem(db, {
      Item: { ...commissionKey(merchantId, ledger.order_uuid), type: 'commission', ...ledger },
      ConditionExpression: CONDITION[stamp.kind],
      ...(stamp.kind === 'applied' ? { ExpressionAttributeValues: { ':applied': stamp.version } } : {}),
    }),
  );
