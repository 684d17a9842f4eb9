import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { invalidField } from '#shared/errors';
import { lastPage, type PageQuery } from '#shared/page-window';
import { refuse, text } from '#shared/schemas/common';

/** per_page is capped (the spec leaves the maximum open; docs/design-notes.md, "Pagination"). */
export const DEFAULT_PER_PAGE = 15;
export const MAX_PER_PAGE = 100;

/** Plain decimal digits in one spelling: `16`, never `0x10`, `1e1`, `16.0`, `+16` or `016` (all of which Number() takes). */
const DECIMAL = /^(0|[1-9][0-9]*)$/;
const INTEGER_MESSAGE = 'The :attribute field must be an integer.';

const decimalInt = () =>
  z.transform((value: unknown, ctx) => {
    if (typeof value === 'string' && DECIMAL.test(value)) return Number(value);
    return refuse(ctx, value, INTEGER_MESSAGE);
  });

/** An empty query value means "not given" (Laravel turns '' into null), so the default applies. */
export const given = <T extends z.ZodMiniType>(schema: T) =>
  z.pipe(
    z.transform((value: unknown) => (value === '' ? undefined : value)),
    z.optional(schema),
  );

/** Plain decimal digits from 1 (to `max`), `fallback` when absent or empty; bounds checked before integrality, as boundedInt does. */
export const positiveIntParam = (fallback: number, max?: number) =>
  z.pipe(
    given(z.pipe(decimalInt(), z.number().check(z.minimum(1), ...(max === undefined ? [] : [z.maximum(max)]), z.int()))),
    z.transform((value) => value ?? fallback),
  );

/** The most a page's items may take, JSON-escaped inside Lambda's answer of at most 6 MB. */
const MAX_PAGE_BYTES = 5 * 1024 * 1024;

/** The page's items, or a 422 naming per_page when they are too large to send in one answer. */
export const fittingPage = <T>(items: T[]): T[] => {
  if (Buffer.byteLength(JSON.stringify(JSON.stringify(items))) > MAX_PAGE_BYTES)
    throw invalidField('per_page', 'The page is too large to send: ask for fewer items per page.');
  return items;
};

/** The query fields every list endpoint shares. */
export const pageQueryShape = {
  per_page: positiveIntParam(DEFAULT_PER_PAGE, MAX_PER_PAGE),
  page: positiveIntParam(1),
};

/** The request's own URL with `page` replaced, the way Laravel builds next/prev links. */
const pageUrl = (url: string, rawQuery: Record<string, string>, page: number) => {
  const params = new URLSearchParams(rawQuery);
  params.set('page', String(page));
  return `${url}?${params.toString()}`;
};

export const laravelPagination = (total: number, query: PageQuery, link: { url: string; rawQuery: Record<string, string> }) => {
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

export const invitePagination = (total: number, count: number, query: PageQuery) => ({
  total,
  count,
  per_page: query.per_page,
  current_page: query.page,
  total_pages: lastPage(total, query.per_page),
});

/** A cursor: the position (base64url) and a tag binding it to the list's scope (docs/design-notes.md#pagination). */
const CURSOR = /^([A-Za-z0-9_-]{1,600})\.([A-Za-z0-9_-]{22})$/;
const CURSOR_MESSAGE = 'The selected :attribute is invalid.';

const cursorTag = (scope: string, position: string) =>
  createHash('sha256').update(`${scope}\n${position}`).digest('base64url').slice(0, 22);

/** A cursor as the client received it: its position and tag, not yet checked against a list. */
export type CursorInput = { position: string; tag: string };

/** The next page's cursor for the position of the last item read. */
export const encodeCursor = (position: string, scope: string): string =>
  `${Buffer.from(position, 'utf8').toString('base64url')}.${cursorTag(scope, position)}`;

/** `page` on a list read by cursor: refused, so a client paging by number is told rather than given the first page again. */
export const pageRefused = (cursorName: string) =>
  z.optional(
    z
      .pipe(
        z.unknown(),
        z.transform((value, ctx) =>
          refuse(ctx, value, `The :attribute field is not taken here: this list is paged by cursor (${cursorName}).`),
        ),
      )
      // Documented as taking no value at all (JSON Schema `not: {}`).
      .check(z.meta({ description: `Not taken: this list is paged by \`${cursorName}\`; any value is refused (422).`, not: {} })),
  );

/** The `cursor` query parameter: absent or '' is the first page; a value not shaped as a cursor is 422. */
export const cursorParam = () =>
  z.optional(
    z.nullable(
      z.pipe(
        text(),
        z.transform((value, ctx): CursorInput | null => {
          if (value === '') return null;
          const match = CURSOR.exec(value);
          const position = match ? Buffer.from(match[1] as string, 'base64url').toString('utf8') : '';
          // base64url decoding skips what it cannot read: only a round trip proves the text was ours.
          if (match && position.isWellFormed() && Buffer.from(position, 'utf8').toString('base64url') === match[1])
            return { position, tag: match[2] as string };
          return refuse(ctx, value, CURSOR_MESSAGE);
        }),
      ),
    ),
  );

/** The position a cursor names in this list (its scope), or a 422 on `field` when it names another list or was edited. */
export const openCursor = (cursor: CursorInput | null | undefined, scope: string, field = 'cursor'): string | undefined => {
  if (!cursor) return undefined;
  if (cursorTag(scope, cursor.position) !== cursor.tag) throw invalidField(field, CURSOR_MESSAGE.replace(':attribute', field));
  return cursor.position;
};
