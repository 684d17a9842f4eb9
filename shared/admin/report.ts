import * as z from 'zod/mini';
import { merchantPk } from '#shared/db/entities/base';
import { type CommissionLedger, parseCommissionLedgerImage } from '#shared/db/entities/commission';
import {
  addFigures,
  FIGURE_NAMES,
  type Figures,
  type PeriodKind,
  readAffiliateTotals,
  readMerchantTotals,
  replaceClosedTotals,
  type TotalsItem,
  ZERO_FIGURES,
} from '#shared/db/entities/commission-totals';
import { queryKeyPrefix } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { commissionReport, LEDGER_WRITE_LAG_SECONDS, ledgerDayFigures, ledgerTotalsDeltas, type ReportRow } from '#shared/domain/reports';
import { reportQuery } from '#shared/schemas/reports';
import { commissionReportRow } from '#shared/schemas/responses';
import { addDays, addMonths } from '#shared/time';
import { laravelErrors } from '#shared/validation/messages';
import { AdminError, requireMerchant } from './operations';

// The commission report for operators: its rows, all pages at once, as JSON or CSV; the check of the totals against the ledgers; their rebuild.

/** Every row of the report, its query (the route's: from, to, group_by, affiliate_slug) validated as the route validates it. */
export const reportRows = async (store: TableRef, merchantId: string, input: Partial<Record<string, string>>) => {
  const parsed = z.safeParse(reportQuery, input);
  if (!parsed.success) {
    const errors = laravelErrors(parsed.error.issues as never, input);
    throw new AdminError(Object.values(errors).flat().join(' '));
  }
  // One page holding every row (a year of days of every affiliate is far fewer; DynamoDB's Limit is an int32).
  const query = { ...parsed.data, per_page: 10_000_000, page: 1 };
  const report = await commissionReport(store, merchantId, query);
  return { from: query.from, to: query.to, group_by: query.group_by, as_of: report.as_of, rows: report.rows };
};

/** The CSV's columns: the report row's fields, in the API's order. */
const CSV_COLUMNS = Object.keys(commissionReportRow.shape) as (keyof ReportRow)[];

/** A CSV field, quoted when it holds a separator, a quote or a line break (RFC 4180). */
const csvField = (value: string | number | undefined) => {
  const text = value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** The rows as CSV with a header line; the columns the grouping does not have are left out. */
export const reportCsv = (rows: readonly ReportRow[], groupBy: string) => {
  const columns = CSV_COLUMNS.filter(
    (column) => (column !== 'affiliate_slug' || groupBy.startsWith('affiliate')) && (column !== 'period' || groupBy !== 'affiliate'),
  );
  return [columns.join(','), ...rows.map((row) => columns.map((column) => csvField(row[column])).join(','))].join('\n');
};

/** One line per difference between the merchant's day and month totals per affiliate and what its ledgers add up to. */
export const reportTotalsDifferences = async (
  store: TableRef,
  merchantId: string,
  ledgers: Iterable<CommissionLedger>,
): Promise<string[]> => {
  // What the ledgers add up to per (affiliate, UTC day, currency): the truth the totals must equal.
  const expected = new Map<string, Figures>();
  for (const ledger of ledgers) {
    for (const [day, figures] of ledgerDayFigures(ledger, ledger.entries)) {
      const key = `${ledger.affiliate_slug}|${day}|${ledger.currency_code}`;
      expected.set(key, addFigures(expected.get(key) ?? ZERO_FIGURES, figures));
    }
  }
  for (const [key, figures] of expected) if (Object.values(figures).every((value) => value === 0)) expected.delete(key);
  const days = [...expected.keys()].map((key) => key.split('|')[1] as string).sort();
  const differences: string[] = [];
  const first = days[0] ?? '2000-01-01';
  const after = periodEnd('D', days.at(-1) ?? first);
  const stored = await readAffiliateTotals(store, merchantId, 'D', { from: first, to: after });
  const actual = new Map(stored.map((item) => [`${item.affiliate_slug}|${item.period}|${item.currency_code}`, item]));
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const want = expected.get(key) ?? { ...ZERO_FIGURES };
    const have = actual.get(key) ?? { ...ZERO_FIGURES };
    for (const field of FIGURE_NAMES) {
      if (want[field] !== have[field])
        differences.push(
          `merchant ${merchantId} ${key.replaceAll('|', ' ')}: ${field} ${have[field]} in the totals, ${want[field]} in the ledgers`,
        );
    }
  }
  const months = new Map<string, Figures>();
  for (const [key, figures] of expected) {
    const [slug, day, currency] = key.split('|') as [string, string, string];
    const monthKey = `${slug}|${day.slice(0, 7)}|${currency}`;
    months.set(monthKey, addFigures(months.get(monthKey) ?? ZERO_FIGURES, figures));
  }
  const storedMonths = await readAffiliateTotals(store, merchantId, 'M', { from: first.slice(0, 7), to: `${after.slice(0, 7)}~` });
  const actualMonths = new Map(storedMonths.map((item) => [`${item.affiliate_slug}|${item.period}|${item.currency_code}`, item]));
  for (const [key, want] of months) {
    const have = actualMonths.get(key);
    if (!have || FIGURE_NAMES.some((field) => have[field] !== want[field])) {
      differences.push(
        `merchant ${merchantId} month ${key.replaceAll('|', ' ')}: totals ${JSON.stringify(have ?? null)}, ledgers ${JSON.stringify(want)}`,
      );
    }
  }
  return differences;
};

/** `npm run admin -- check-totals`: every ledger against the totals; the current day may show a difference still in the change feed. */
export const checkTotalsAgainstLedgers = async (store: TableRef, merchantId: string) => {
  await requireMerchant(store, merchantId);
  const ledgers = (await queryKeyPrefix(store, merchantPk(merchantId), 'COMMISSION#')).map(parseCommissionLedgerImage);
  return { merchant_id: merchantId, ledgers: ledgers.length, differences: await reportTotalsDifferences(store, merchantId, ledgers) };
};

/** How long after a period's end it counts as closed: the ledger writes' lag and a margin for clocks. */
const CLOSED_AFTER_MS = LEDGER_WRITE_LAG_SECONDS * 1000 + 5 * 60 * 1000;

/** The first day after a day (`2026-11-30`) or a month (`2026-11`): when the period has ended. */
const periodEnd = (kind: PeriodKind, period: string) => (kind === 'D' ? addDays(period, 1) : `${addMonths(period, 1)}-01`);

/** Rebuilds closed days' and months' totals from the ledgers, as the feed counts (docs/reports.md#exactly-once-without-a-transaction). */
export const rebuildClosedTotals = async (store: TableRef, merchantId: string, now = Date.now()) => {
  const ledgers = await queryKeyPrefix(store, merchantPk(merchantId), 'COMMISSION#');
  const closedBy = new Date(now - CLOSED_AFTER_MS).toISOString().slice(0, 10);
  const closed = ledgers
    .flatMap((ledger) => ledgerTotalsDeltas(undefined, ledger))
    .filter((delta) => periodEnd(delta.kind, delta.period) <= closedBy);
  const firstDay = closed.flatMap((delta) => (delta.kind === 'D' ? [delta.period] : [])).sort()[0];
  if (firstDay === undefined) return { merchant_id: merchantId, closed_before: closedBy, written: 0, removed: 0 };
  const affiliates = new Map<string, TotalsItem & { affiliate_slug: string }>();
  for (const { kind, period, currency_code, affiliate_slug, ...figures } of closed) {
    const key = `${kind}|${period}|${currency_code}|${affiliate_slug}`;
    const sum = addFigures(affiliates.get(key) ?? ZERO_FIGURES, figures);
    affiliates.set(key, { kind, period, currency_code, affiliate_slug, ...sum });
  }
  const merchant = new Map<string, TotalsItem & { affiliate_rows: number }>();
  for (const { kind, period, currency_code, affiliate_slug: _slug, ...figures } of affiliates.values()) {
    const key = `${kind}|${period}|${currency_code}`;
    const before = merchant.get(key) ?? { ...ZERO_FIGURES, affiliate_rows: 0 };
    const through = kind === 'M' ? { through: `${periodEnd(kind, period)}T00:00:00.000Z` } : {};
    merchant.set(key, {
      kind,
      period,
      currency_code,
      affiliate_rows: before.affiliate_rows + 1,
      ...addFigures(before, figures),
      ...through,
    });
  }
  const items: TotalsItem[] = [...affiliates.values(), ...merchant.values()];
  const stale = await staleTotals(store, merchantId, { firstDay, closedBy }, items);
  await replaceClosedTotals(store, merchantId, items, stale);
  return { merchant_id: merchantId, closed_before: closedBy, written: items.length, removed: stale.length };
};

/** The totals items of the closed periods from `firstDay` on that the rebuild does not write. */
const staleTotals = async (
  store: TableRef,
  merchantId: string,
  { firstDay, closedBy }: { firstDay: string; closedBy: string },
  items: readonly TotalsItem[],
): Promise<TotalsItem[]> => {
  const identity = (item: TotalsItem) =>
    `${item.kind}|${item.period}|${item.currency_code}|${'affiliate_slug' in item ? item.affiliate_slug : ''}`;
  const written = new Set(items.map(identity));
  const ranges: [PeriodKind, { from: string; to: string }][] = [
    ['D', { from: firstDay, to: closedBy }],
    ['M', { from: firstDay.slice(0, 7), to: closedBy.slice(0, 7) }],
  ];
  const found: TotalsItem[] = [];
  for (const [kind, range] of ranges) {
    // Periods compare as strings within the key range [from, to): what sorts before `to` is closed.
    for (const item of await readAffiliateTotals(store, merchantId, kind, range)) found.push({ kind, ...item });
    for (const item of await readMerchantTotals(store, merchantId, kind, range.from, range.to)) found.push({ kind, ...item });
  }
  return found.filter((item) => item.period < (item.kind === 'D' ? closedBy : closedBy.slice(0, 7)) && !written.has(identity(item)));
};
