import * as z from 'zod/mini';
import { pageQueryShape } from '#shared/http/pagination';
import { addDays, addMonths } from '#shared/time';
import { optionalString, refuse, text } from './common';

/** How a commission report groups its rows: by affiliate, by a period, or by both. */
const REPORT_GROUPINGS = ['affiliate', 'month', 'day', 'affiliate,month', 'affiliate,day'] as const;
type ReportGrouping = (typeof REPORT_GROUPINGS)[number];

/** The longest range a report covers, `to` exclusive. */
export const MAX_REPORT_DAYS = 366;

const DAY_MS = 24 * 3600 * 1000;

/** A calendar date `YYYY-MM-DD` that exists (2026-02-30 and 2026-13-01 do not). */
const isDate = (value: string) => {
  const at = Date.parse(`${value}T00:00:00Z`);
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(at) && new Date(at).toISOString().startsWith(value);
};

const dateField = () =>
  z.optional(
    z.nullable(
      z.pipe(
        text().check(z.trim()),
        z.transform((value, ctx) => {
          if (value === '') return null;
          if (isDate(value)) return value;
          return refuse(ctx, value, 'The :attribute field must match the format Y-m-d.');
        }),
      ),
    ),
  );

const monthStart = (date: string) => `${date.slice(0, 7)}-01`;
const addMonth = (date: string) => `${addMonths(date.slice(0, 7), 1)}-01`;

/** The commission report's query: UTC dates, `to` exclusive; both absent the current month, one absent the edge of the other's month. */
export const reportQuery = z.pipe(
  z.object({
    ...pageQueryShape,
    from: dateField(),
    to: dateField(),
    group_by: z.pipe(
      z.optional(z.nullable(text())),
      z.transform((value, ctx) => {
        const grouping = value === undefined || value === null || value.trim() === '' ? 'affiliate' : value.replace(/\s+/g, '');
        if ((REPORT_GROUPINGS as readonly string[]).includes(grouping)) return grouping as ReportGrouping;
        return refuse(ctx, value, 'The selected :attribute is invalid.');
      }),
    ),
    affiliate_slug: optionalString(),
  }),
  z.transform((query, ctx) => {
    const today = new Date().toISOString().slice(0, 10);
    const from = query.from ?? (query.to ? monthStart(addDays(query.to, -1)) : monthStart(today));
    const to = query.to ?? addMonth(from);
    // The month after December 9999 has no `YYYY-MM-DD`.
    if (!isDate(to)) return refuse(ctx, query.from, 'The :attribute field must be a date before 9999-12-01.', ['from']);
    const days = (Date.parse(to) - Date.parse(from)) / DAY_MS;
    if (days <= 0) return refuse(ctx, query.to, 'The :attribute field must be a date after from.', ['to']);
    if (days > MAX_REPORT_DAYS)
      return refuse(ctx, query.to, `The :attribute field must be at most ${MAX_REPORT_DAYS} days after from.`, ['to']);
    return { ...query, from, to, affiliate_slug: query.affiliate_slug?.toLowerCase() ?? null };
  }),
);

export type ReportQuery = z.output<typeof reportQuery>;
