import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { queryItems } from '#shared/db/query';
import { GSI1, type TableRef } from '#shared/db/table-def';
import { merchantPk, parseStored } from './base';

/**
 * Commission totals: what the commission ledgers of a merchant add up to, per UTC day and per
 * month, kept by the change feed (shared/domain/reports.ts says what a ledger write adds). All in
 * two partitions of the merchant, never a key shared by merchants:
 * - `M#<merchant>#TOTALS`: the merchant's totals, sk `D#<yyyy-mm-dd>#<currency>` and
 *   `M#<yyyy-mm>#<currency>`, each also counting its affiliate rows (`affiliate_rows`: how many
 *   affiliate totals items that day or month has, so a report grouped by affiliate knows its
 *   total without reading them); and `AS_OF`, how far the feed has applied the merchant's ledgers.
 * - `M#<merchant>#TOTALS#A`: per affiliate, sk `D#<day>#<slug>#<currency>` and
 *   `M#<month>#<slug>#<currency>`, so one period's affiliates are one key range in slug order; on
 *   gsi1 under `M#<merchant>#TOTALS#A#<slug>` (sk `D#<day>#<currency>`, `M#<month>#<currency>`)
 *   for a report of one affiliate.
 *
 * Every write is one UpdateItem that `ADD`s a record's figures and sets `applied_through` to the
 * stream sequence number of the record, conditional on the item not having applied it (or a later
 * one) yet: a record read again or replayed adds nothing. `created_seq` (set once) names the
 * record that created the item, so a record read again still knows the affiliate rows it created.
 */

export type Figures = { orders: number; sales_value: number; accrued_value: number; reversed_value: number };

export type PeriodKind = 'D' | 'M';

const figuresShape = {
  orders: z.number(),
  sales_value: z.number(),
  accrued_value: z.number(),
  reversed_value: z.number(),
};

const totalsSchema = z.object({ ...figuresShape, period: z.string(), currency_code: z.string(), affiliate_rows: z.optional(z.number()) });
const affiliateTotalsSchema = z.object({ ...figuresShape, period: z.string(), currency_code: z.string(), affiliate_slug: z.string() });
const asOfSchema = z.object({ through: z.string() });

export type MerchantTotals = Figures & { period: string; currency_code: string; affiliate_rows: number };
export type AffiliateTotals = Figures & { period: string; currency_code: string; affiliate_slug: string };

export const totalsPk = (merchantId: string) => `${merchantPk(merchantId)}#TOTALS`;
export const affiliateTotalsPk = (merchantId: string) => `${merchantPk(merchantId)}#TOTALS#A`;
const affiliateIndexPk = (merchantId: string, slug: string) => `${affiliateTotalsPk(merchantId)}#${slug}`;

const merchantSk = (kind: PeriodKind, period: string, currency: string) => `${kind}#${period}#${currency}`;
const affiliateSk = (kind: PeriodKind, period: string, slug: string, currency: string) => `${kind}#${period}#${slug}#${currency}`;
const AS_OF_SK = 'AS_OF';

/** Stream sequence numbers are decimal strings of up to 40 digits: padded, their string order is their numeric order. */
export const paddedSequence = (sequenceNumber: string) => sequenceNumber.padStart(40, '0');

/** One ledger write's contribution to one (affiliate, period, currency). */
export type TotalsDelta = Figures & { kind: PeriodKind; period: string; affiliate_slug: string; currency_code: string };

const ADD_FIGURES = 'ADD orders :orders, sales_value :sales, accrued_value :accrued, reversed_value :reversed';
const SET_APPLIED =
  ' SET applied_through = :seq, created_seq = if_not_exists(created_seq, :seq), #type = :type, period = :period, currency_code = :currency';
const NOT_APPLIED = 'attribute_not_exists(applied_through) OR applied_through < :seq';

const figureValues = (delta: Figures) => ({
  ':orders': delta.orders,
  ':sales': delta.sales_value,
  ':accrued': delta.accrued_value,
  ':reversed': delta.reversed_value,
});

/**
 * Adds the figures to one item unless the record `seq` was applied to it already; returns whether
 * the item was created by this record (now or when it was first applied).
 */
const addOnce = async (
  { ddb, table }: TableRef,
  key: { pk: string; sk: string },
  seq: string,
  extra: { set: string; values: Record<string, unknown>; add?: string },
): Promise<boolean> => {
  try {
    const { Attributes } = await ddb.send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: `${ADD_FIGURES}${extra.add ?? ''}${SET_APPLIED}${extra.set}`,
        ConditionExpression: NOT_APPLIED,
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':seq': seq, ...extra.values },
        ReturnValues: 'UPDATED_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return Attributes?.created_seq === seq;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return error.Item?.created_seq?.S === seq;
    throw error;
  }
};

/**
 * Applies one ledger write's deltas once (the record's stream sequence number `seq`, padded): the
 * affiliate items first, then the merchant's items with the affiliate rows they created. A failure
 * part way leaves the record to be read again; what was applied is then skipped and what was
 * created is still counted.
 */
export const applyTotalsDeltas = async (db: TableRef, merchantId: string, seq: string, deltas: readonly TotalsDelta[]): Promise<void> => {
  const created = await Promise.all(
    deltas.map((delta) =>
      addOnce(
        db,
        { pk: affiliateTotalsPk(merchantId), sk: affiliateSk(delta.kind, delta.period, delta.affiliate_slug, delta.currency_code) },
        seq,
        {
          set: ', affiliate_slug = :slug, gsi1pk = :gpk, gsi1sk = :gsk',
          values: {
            ...figureValues(delta),
            ':type': 'affiliate_totals',
            ':period': delta.period,
            ':currency': delta.currency_code,
            ':slug': delta.affiliate_slug,
            ':gpk': affiliateIndexPk(merchantId, delta.affiliate_slug),
            ':gsk': merchantSk(delta.kind, delta.period, delta.currency_code),
          },
        },
      ),
    ),
  );
  const merchantDeltas = new Map<string, { delta: TotalsDelta; figures: Figures; rows: number }>();
  deltas.forEach((delta, index) => {
    const sk = merchantSk(delta.kind, delta.period, delta.currency_code);
    const entry = merchantDeltas.get(sk) ?? { delta, figures: { orders: 0, sales_value: 0, accrued_value: 0, reversed_value: 0 }, rows: 0 };
    entry.figures.orders += delta.orders;
    entry.figures.sales_value += delta.sales_value;
    entry.figures.accrued_value += delta.accrued_value;
    entry.figures.reversed_value += delta.reversed_value;
    if (created[index]) entry.rows += 1;
    merchantDeltas.set(sk, entry);
  });
  await Promise.all(
    [...merchantDeltas].map(([sk, { delta, figures, rows }]) =>
      addOnce(db, { pk: totalsPk(merchantId), sk }, seq, {
        set: '',
        add: ', affiliate_rows :rows',
        values: {
          ...figureValues(figures),
          ':type': 'merchant_totals',
          ':period': delta.period,
          ':currency': delta.currency_code,
          ':rows': rows,
        },
      }),
    ),
  );
};

/**
 * Moves the merchant's applied-through time forward (never back): every ledger write the stream
 * carried up to `through` has been applied. A failure only leaves it behind, which claims less.
 */
export const advanceTotalsAsOf = async ({ ddb, table }: TableRef, merchantId: string, through: string): Promise<void> => {
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: totalsPk(merchantId), sk: AS_OF_SK },
        UpdateExpression: 'SET through = :through, #type = :type',
        ConditionExpression: 'attribute_not_exists(through) OR through < :through',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':through': through, ':type': 'totals_as_of' },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
};

const between = (kind: PeriodKind, from: string, to: string) => ({ ':from': `${kind}#${from}`, ':to': `${kind}#${to}` });

/**
 * The merchant's totals items of one kind for periods in [from, to) (periods compare as strings:
 * `D#2026-11-30#EUR` sorts before `D#2026-12-01`), and its applied-through time, in one Query.
 */
export const readMerchantTotals = async (
  db: TableRef,
  merchantId: string,
  kind: PeriodKind,
  from: string,
  to: string,
): Promise<MerchantTotals[]> => {
  const items = await queryItems(db, {
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': totalsPk(merchantId), ...between(kind, from, to) },
  });
  return items.map((item) => {
    const parsed = parseStored('merchant_totals', totalsSchema, item);
    return {
      ...pickFigures(parsed),
      period: parsed.period,
      currency_code: parsed.currency_code,
      affiliate_rows: parsed.affiliate_rows ?? 0,
    };
  });
};

/** The merchant's applied-through time, if the feed has applied any of its ledgers. */
export const readTotalsAsOf = async (db: TableRef, merchantId: string): Promise<string | undefined> => {
  const [item] = await queryItems(db, {
    KeyConditionExpression: 'pk = :pk AND sk = :sk',
    ExpressionAttributeValues: { ':pk': totalsPk(merchantId), ':sk': AS_OF_SK },
  });
  return item === undefined ? undefined : parseStored('totals_as_of', asOfSchema, item).through;
};

const pickFigures = (item: Figures): Figures => ({
  orders: item.orders,
  sales_value: item.sales_value,
  accrued_value: item.accrued_value,
  reversed_value: item.reversed_value,
});

const toAffiliateTotals = (item: unknown): AffiliateTotals => {
  const parsed = parseStored('affiliate_totals', affiliateTotalsSchema, item);
  return { ...pickFigures(parsed), period: parsed.period, currency_code: parsed.currency_code, affiliate_slug: parsed.affiliate_slug };
};

/**
 * Affiliate totals items of one kind for periods in [from, to), in (period, slug, currency) order;
 * `limit` stops after that many (a page and what precedes it), one affiliate's when `slug` is given.
 */
export const readAffiliateTotals = async (
  db: TableRef,
  merchantId: string,
  kind: PeriodKind,
  range: { from: string; to: string },
  options: { limit?: number; slug?: string } = {},
): Promise<AffiliateTotals[]> => {
  const items =
    options.slug === undefined
      ? await queryItems(
          db,
          {
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': affiliateTotalsPk(merchantId), ...between(kind, range.from, range.to) },
          },
          options.limit,
        )
      : await queryItems(
          db,
          {
            IndexName: GSI1.indexName,
            KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': affiliateIndexPk(merchantId, options.slug), ...between(kind, range.from, range.to) },
          },
          options.limit,
        );
  return items.map(toAffiliateTotals);
};
