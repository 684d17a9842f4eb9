import type * as z from 'zod/mini';
import { type CommissionLedger, type LedgerEntry, parseCommissionLedgerImage } from '#shared/db/entities/commission';
import {
  addFigures,
  type Figures,
  type PeriodKind,
  readAffiliateTotals,
  readMerchantTotals,
  readTotalsAsOf,
  type TotalsDelta,
  ZERO_FIGURES,
} from '#shared/db/entities/commission-totals';
import type { TableRef } from '#shared/db/table-def';
import { pageWindow } from '#shared/page-window';
import type { ReportQuery } from '#shared/schemas/reports';
import type { commissionReportRow } from '#shared/schemas/responses';
import { addMonths } from '#shared/time';

// Commission reports, read from the totals the change feed keeps; an entry counts on the UTC day it was booked.

/** How long after its entries' time a ledger write can still land: `as_of` stays this far behind the feed. */
export const LEDGER_WRITE_LAG_SECONDS = 10;

/** What a ledger's entries add up to per UTC day: an accrual counts its order and the rows' base values. */
export const ledgerDayFigures = (ledger: CommissionLedger, entries: readonly LedgerEntry[]): Map<string, Figures> => {
  const byDay = new Map<string, Figures>();
  const salesValue = ledger.rows.reduce((sum, row) => sum + row.base_value, 0);
  for (const entry of entries) {
    const day = entry.at.slice(0, 10);
    const figures = { ...(byDay.get(day) ?? ZERO_FIGURES) };
    if (entry.type === 'accrual') {
      figures.orders += 1;
      figures.sales_value += salesValue;
    }
    if (entry.amount > 0) figures.accrued_value += entry.amount;
    if (entry.amount < 0) figures.reversed_value += entry.amount;
    byDay.set(day, figures);
  }
  return byDay;
};

/** What one write of a ledger adds to the totals: its new entries by UTC day and month; zero amounts (a shipping change) add nothing. */
export const ledgerTotalsDeltas = (before: unknown, after: unknown): TotalsDelta[] => {
  const ledger = parseCommissionLedgerImage(after);
  const known = before === undefined ? 0 : parseCommissionLedgerImage(before).entries.length;
  const common = { affiliate_slug: ledger.affiliate_slug, currency_code: ledger.currency_code };
  return [...ledgerDayFigures(ledger, ledger.entries.slice(known))]
    .filter(([, figures]) => Object.values(figures).some((value) => value !== 0))
    .flatMap(([day, figures]) => [
      { ...figures, ...common, kind: 'D' as const, period: day },
      { ...figures, ...common, kind: 'M' as const, period: day.slice(0, 7) },
    ]);
};

export type ReportRow = z.output<typeof commissionReportRow>;

type CommissionReport = { rows: ReportRow[]; total: number; as_of: string | null };

/** A range of days [from, to) as the stored periods that cover it exactly: its whole months, and the days before and after them. */
export const rangeParts = (from: string, to: string) => {
  if (from.slice(0, 7) === to.slice(0, 7)) return { months: undefined, days: [{ from, to }] };
  const firstWhole = from.endsWith('-01') ? from.slice(0, 7) : addMonths(from.slice(0, 7), 1);
  const endWhole = to.slice(0, 7);
  if (firstWhole >= endWhole) return { months: undefined, days: [{ from, to }] };
  const days = [
    ...(from.endsWith('-01') ? [] : [{ from, to: `${firstWhole}-01` }]),
    ...(to.endsWith('-01') ? [] : [{ from: `${endWhole}-01`, to }]),
  ];
  return { months: { from: firstWhole, to: endWhole }, days };
};

type Stored = Figures & { period: string; currency_code: string; affiliate_slug?: string };

/** Rows of stored totals, summed by their row key, in (period, slug, currency) order. */
const summed = (items: readonly Stored[], by: { affiliate: boolean; time: 'month' | 'day' | null }): ReportRow[] => {
  const rows = new Map<string, ReportRow>();
  for (const item of items) {
    const period = by.time === 'month' ? item.period.slice(0, 7) : by.time === 'day' ? item.period : undefined;
    const slug = by.affiliate ? item.affiliate_slug : undefined;
    const key = `${period ?? ''}#${slug ?? ''}#${item.currency_code}`;
    const row = rows.get(key) ?? {
      ...(slug === undefined ? {} : { affiliate_slug: slug }),
      ...(period === undefined ? {} : { period }),
      currency_code: item.currency_code,
      ...ZERO_FIGURES,
      net_value: 0,
    };
    const sum = addFigures(row, item);
    rows.set(key, { ...row, ...sum, net_value: sum.accrued_value + sum.reversed_value });
  }
  return [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
};

/** More rows than the feed adds before it counts them (a batch of at most 100 records, a few rows each). */
const ROWS_A_COUNT_MAY_LAG = 1000;

const asOfFrom = (through: string | undefined) =>
  through === undefined ? null : new Date(Date.parse(through) - LEDGER_WRITE_LAG_SECONDS * 1000).toISOString();

/** The report's page of rows and how many there are; which items each grouping reads: docs/reports.md#the-totals-shareddbentitiescommission-totalsts. */
export const commissionReport = async (db: TableRef, merchantId: string, query: ReportQuery): Promise<CommissionReport> => {
  const { from, to } = query;
  const affiliate = query.group_by.startsWith('affiliate');
  const time: 'month' | 'day' | null = query.group_by.endsWith('month') ? 'month' : query.group_by.endsWith('day') ? 'day' : null;
  const window = pageWindow(Number.MAX_SAFE_INTEGER, query);
  const slug = query.affiliate_slug ?? undefined;
  const asOf = readTotalsAsOf(db, merchantId).then(asOfFrom);

  /** Affiliate items of one kind and range, a page at a time from the nearer end, the total from the merchant's counts. */
  const paged = async (kind: PeriodKind, range: { from: string; to: string }, single: boolean) => {
    const by = { affiliate: true, time: single ? null : time };
    const wanted = window.offset + query.per_page;
    const counting = readMerchantTotals(db, merchantId, kind, range.from, range.to).then((counts) =>
      counts.reduce((sum, item) => sum + item.affiliate_rows, 0),
    );
    const behind = window.offset === 0 ? 0 : (await counting) - window.offset;
    // A page far past the last: empty, unread (its Limit could pass an int32); just past it, the count may lag, so it is read.
    if (window.offset > 0 && behind <= -ROWS_A_COUNT_MAY_LAG) return { rows: [], total: await counting, as_of: await asOf };
    if (behind > 0 && behind < wanted) {
      // This page's rows, read backward from the end (there may be more than counted); fewer than counted (a rebuild): all of them.
      const tail = (await readAffiliateTotals(db, merchantId, kind, range, { limit: behind, backward: true })).reverse();
      const all = tail.length < behind;
      const rows = (all ? tail.slice(window.offset) : tail).slice(0, query.per_page);
      return { rows: summed(rows, by), total: all ? tail.length : window.offset + behind, as_of: await asOf };
    }
    const [items, inCounts] = await Promise.all([readAffiliateTotals(db, merchantId, kind, range, { limit: wanted }), counting]);
    // A row the feed added between the two reads is in one only: a short read is the total, a full one at least that many.
    const total = items.length < wanted ? items.length : Math.max(inCounts, items.length);
    return { rows: summed(items.slice(window.offset), by), total, as_of: await asOf };
  };

  const parts = rangeParts(from, to);
  if (affiliate && slug === undefined) {
    if (time === 'day') return paged('D', { from, to }, false);
    const wholeMonths = parts.months !== undefined && parts.days.length === 0;
    const oneMonth = wholeMonths && parts.months?.to === addMonths(parts.months.from, 1);
    if (wholeMonths && parts.months && (time === 'month' || oneMonth)) return paged('M', parts.months, time === null);
  }

  /** Everything of the range, from month items where whole months allow and day items elsewhere; one affiliate's, whatever the grouping. */
  const read = (kind: PeriodKind, range: { from: string; to: string }): Promise<Stored[]> =>
    affiliate || slug !== undefined
      ? readAffiliateTotals(db, merchantId, kind, range, slug === undefined ? {} : { slug })
      : readMerchantTotals(db, merchantId, kind, range.from, range.to);
  const reads =
    time === 'day'
      ? [read('D', { from, to })]
      : [...(parts.months ? [read('M', parts.months)] : []), ...parts.days.map((range) => read('D', range))];
  const rows = summed((await Promise.all(reads)).flat(), { affiliate, time });
  return { rows: rows.slice(window.offset, window.offset + query.per_page), total: rows.length, as_of: await asOf };
};
