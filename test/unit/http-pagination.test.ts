import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ApiError } from '#shared/errors';
import {
  cursorParam,
  DEFAULT_PER_PAGE,
  encodeCursor,
  invitePagination,
  laravelPagination,
  MAX_PER_PAGE,
  openCursor,
  pageQueryShape,
} from '#shared/http/pagination';
import { lastPage, pageWindow, slicePage } from '#shared/page-window';
import { laravelErrors } from '#shared/validation/messages';

const link = { url: 'https://api.example.com/live/api/v2/orders', rawQuery: {} as Record<string, string> };

describe('lastPage', () => {
  it.each([
    [0, 15, 1],
    [1, 15, 1],
    [15, 15, 1],
    [16, 15, 2],
    [100, 15, 7],
    [100, 100, 1],
  ])('is %i items / %i per page -> %i', (total, perPage, expected) => {
    expect(lastPage(total, perPage)).toBe(expected);
  });
});

describe('pageWindow', () => {
  it('starts page N at (N-1) * per_page', () => {
    expect(pageWindow(100, { page: 3, per_page: 15 })).toEqual({ offset: 30, count: 15 });
  });

  it('holds only the remainder on the last page', () => {
    expect(pageWindow(100, { page: 7, per_page: 15 })).toEqual({ offset: 90, count: 10 });
  });

  it('holds nothing past the end', () => {
    expect(pageWindow(100, { page: 8, per_page: 15 })).toEqual({ offset: 105, count: 0 });
    expect(pageWindow(0, { page: 1, per_page: 15 })).toEqual({ offset: 0, count: 0 });
  });
});

describe('slicePage', () => {
  it('returns the items of the requested page of a list read whole', () => {
    const items = Array.from({ length: 7 }, (_, index) => index + 1);
    expect(slicePage(items, { page: 1, per_page: 3 })).toEqual([1, 2, 3]);
    expect(slicePage(items, { page: 3, per_page: 3 })).toEqual([7]);
    expect(slicePage(items, { page: 4, per_page: 3 })).toEqual([]);
  });
});

describe('laravelPagination', () => {
  it('on the first of several pages has a next link and no previous link', () => {
    // Act
    const pagination = laravelPagination(40, { page: 1, per_page: 15 }, link);

    // Assess
    expect(pagination).toEqual({
      current_page: 1,
      last_page: 3,
      per_page: 15,
      total: 40,
      next_page_url: 'https://api.example.com/live/api/v2/orders?page=2',
      prev_page_url: null,
    });
  });

  it('on a middle page links both ways, keeping the other query fields and replacing page', () => {
    // Act
    const pagination = laravelPagination(
      40,
      { page: 2, per_page: 15 },
      { ...link, rawQuery: { per_page: '15', page: '2', tier_slug: 'gold & silver' } },
    );

    // Assess
    expect(pagination.next_page_url).toBe('https://api.example.com/live/api/v2/orders?per_page=15&page=3&tier_slug=gold+%26+silver');
    expect(pagination.prev_page_url).toBe('https://api.example.com/live/api/v2/orders?per_page=15&page=1&tier_slug=gold+%26+silver');
  });

  it('on the last page has no next link', () => {
    // Act
    const pagination = laravelPagination(40, { page: 3, per_page: 15 }, link);

    // Assess
    expect(pagination.next_page_url).toBeNull();
    expect(pagination.prev_page_url).toBe('https://api.example.com/live/api/v2/orders?page=2');
  });

  it('with a single page has no links at all', () => {
    expect(laravelPagination(0, { page: 1, per_page: 15 }, link)).toMatchObject({ last_page: 1, next_page_url: null, prev_page_url: null });
  });

  it('past the end points back to the last page', () => {
    // Act
    const pagination = laravelPagination(40, { page: 9, per_page: 15 }, link);

    // Assess
    expect(pagination).toMatchObject({ current_page: 9, last_page: 3, next_page_url: null });
    expect(pagination.prev_page_url).toBe('https://api.example.com/live/api/v2/orders?page=3');
  });
});

describe('invitePagination', () => {
  it('reports total, count on this page, per_page, current_page and total_pages', () => {
    expect(invitePagination(31, 1, { page: 4, per_page: 10 })).toEqual({
      total: 31,
      count: 1,
      per_page: 10,
      current_page: 4,
      total_pages: 4,
    });
  });

  it('has one page when there is nothing', () => {
    expect(invitePagination(0, 0, { page: 1, per_page: 15 })).toMatchObject({ total_pages: 1 });
  });
});

describe('page query', () => {
  const query = z.object(pageQueryShape);

  it(`defaults to page 1 of ${DEFAULT_PER_PAGE}`, () => {
    expect(z.parse(query, {})).toEqual({ per_page: 15, page: 1 });
  });

  it('coerces the query-string values to integers', () => {
    expect(z.parse(query, { per_page: '50', page: '4' })).toEqual({ per_page: 50, page: 4 });
  });

  it.each([{ per_page: '0' }, { per_page: String(MAX_PER_PAGE + 1) }, { page: '0' }, { page: '-1' }, { page: '2.5' }, { per_page: 'ten' }])(
    'refuses %o',
    (input) => {
      expect(z.safeParse(query, input).success).toBe(false);
    },
  );

  it.each(['0x10', '1e2', '1E1', ' 5', '5 ', '+5', '05', '5.0', '0b11', '0o7', 'Infinity', '١٢', '5\u0000'])(
    'takes only plain decimal digits: per_page=%j is 422 "must be an integer" keyed per_page, and so is page',
    (value) => {
      // Act
      const perPage = z.safeParse(query, { per_page: value });
      const page = z.safeParse(query, { page: value });

      // Assess
      expect(perPage.success || laravelErrors(perPage.error.issues, { per_page: value })).toEqual({
        per_page: ['The per page field must be an integer.'],
      });
      expect(page.success || laravelErrors(page.error.issues, { page: value })).toEqual({ page: ['The page field must be an integer.'] });
    },
  );

  it('tells a per_page past its bound the bound, and refuses a page past 2^53', () => {
    // Act
    const perPage = z.safeParse(query, { per_page: '99999999999999999999' });
    const page = z.safeParse(query, { page: '99999999999999999999' });

    // Assess
    expect(perPage.success || laravelErrors(perPage.error.issues, {})).toEqual({
      per_page: ['The per page field must not be greater than 100.'],
    });
    expect(page.success).toBe(false);
  });

  it(`accepts per_page up to ${MAX_PER_PAGE}`, () => {
    expect(z.parse(query, { per_page: String(MAX_PER_PAGE) }).per_page).toBe(MAX_PER_PAGE);
  });
});

const thrown = (act: () => unknown): unknown => {
  try {
    act();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('cursors', () => {
  const query = z.object({ cursor: cursorParam() });
  const SCOPE = 'table-live\nmerchant-1\nWEBHOOK_DELIVERIES#endpoint-1';
  const POSITION = '2026-03-01T10:00:00.000Z#evt_test_1';

  it('round-trips a position through an opaque cursor bound to its list', () => {
    // Prepare
    const cursor = encodeCursor(POSITION, SCOPE);

    // Act
    const parsed = z.parse(query, { cursor });

    // Assess
    expect(cursor).not.toContain('#');
    expect(openCursor(parsed.cursor, SCOPE)).toBe(POSITION);
  });

  it('reads an absent or empty cursor as the first page', () => {
    expect(z.parse(query, {}).cursor).toBeUndefined();
    expect(openCursor(z.parse(query, { cursor: '' }).cursor, SCOPE)).toBeUndefined();
  });

  it.each([
    ['garbage', 'abc'],
    ['a raw position', POSITION],
    ['a cut tag', encodeCursor(POSITION, SCOPE).slice(0, -1)],
    ['padding added', `${encodeCursor(POSITION, SCOPE).split('.')[0]}=.${encodeCursor(POSITION, SCOPE).split('.')[1]}`],
    ['spaces around', ` ${encodeCursor(POSITION, SCOPE)}`],
  ])('refuses %s as 422 "The selected cursor is invalid." keyed cursor', (_name, cursor) => {
    // Act
    const result = z.safeParse(query, { cursor });

    // Assess
    expect(result.success || laravelErrors(result.error.issues, { cursor })).toEqual({ cursor: ['The selected cursor is invalid.'] });
  });

  it.each([
    ['another list (endpoint)', 'table-live\nmerchant-1\nWEBHOOK_DELIVERIES#endpoint-2'],
    ['another merchant', 'table-live\nmerchant-2\nWEBHOOK_DELIVERIES#endpoint-1'],
    ['another stage', 'table-sandbox\nmerchant-1\nWEBHOOK_DELIVERIES#endpoint-1'],
  ])('refuses a well-formed cursor of %s with a 422 keyed cursor, never a page read elsewhere', (_name, scope) => {
    // Prepare
    const parsed = z.parse(query, { cursor: encodeCursor(POSITION, scope) }).cursor;

    // Act
    const refusal = thrown(() => openCursor(parsed, SCOPE));

    // Assess
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({ statusCode: 422, errors: { cursor: ['The selected cursor is invalid.'] } });
  });

  it('refuses an edited position whose tag was kept', () => {
    // Prepare
    const [, tag] = encodeCursor(POSITION, SCOPE).split('.');
    const edited = `${Buffer.from('2099-01-01T00:00:00.000Z#evt_x').toString('base64url')}.${tag}`;

    // Act / Assess
    expect(() => openCursor(z.parse(query, { cursor: edited }).cursor, SCOPE)).toThrow(ApiError);
  });
});
