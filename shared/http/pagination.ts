import * as z from 'zod/mini';
import { lastPage, type PageQuery } from '#shared/page-window';
import type { InvitePagination, LaravelPagination } from './envelope';

/** per_page is capped (the spec leaves the maximum open; docs/design-notes.md, "Pagination"). */
export const DEFAULT_PER_PAGE = 15;
export const MAX_PER_PAGE = 100;

/** An empty query value means "not given" (Laravel turns '' into null), so the default applies. */
const positiveInt = (max?: number) =>
  z.pipe(
    z.transform((value: unknown) => (value === '' ? undefined : value)),
    z.optional(z.coerce.number().check(z.int(), z.minimum(1), ...(max === undefined ? [] : [z.maximum(max)]))),
  );

/** The query fields every list endpoint shares. */
export const pageQueryShape = {
  per_page: z.pipe(
    positiveInt(MAX_PER_PAGE),
    z.transform((value) => value ?? DEFAULT_PER_PAGE),
  ),
  page: z.pipe(
    positiveInt(),
    z.transform((value) => value ?? 1),
  ),
};

/** The request's own URL with `page` replaced, the way Laravel builds next/prev links. */
const pageUrl = (url: string, rawQuery: Record<string, string>, page: number) => {
  const params = new URLSearchParams(rawQuery);
  params.set('page', String(page));
  return `${url}?${params.toString()}`;
};

export const laravelPagination = (
  total: number,
  query: PageQuery,
  link: { url: string; rawQuery: Record<string, string> },
): LaravelPagination => {
  const last = lastPage(total, query.per_page);
  return {
    current_page: query.page,
    last_page: last,
    per_page: query.per_page,
    total,
    next_page_url: query.page < last ? pageUrl(link.url, link.rawQuery, query.page + 1) : null,
    prev_page_url: query.page > 1 ? pageUrl(link.url, link.rawQuery, Math.min(query.page - 1, last)) : null,
  };
};

export const invitePagination = (total: number, count: number, query: PageQuery): InvitePagination => ({
  total,
  count,
  per_page: query.per_page,
  current_page: query.page,
  total_pages: lastPage(total, query.per_page),
});
