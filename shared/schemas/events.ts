import * as z from 'zod/mini';
import { given, pageRefused, positiveIntParam } from '#shared/http/pagination';
import { WEBHOOK_EVENT_TYPES } from '#shared/webhooks/events';
import { commaList, refuse, text } from './common';

/** The event log's page size: 25 unless asked, at most 100. */
export const DEFAULT_EVENTS_LIMIT = 25;
export const MAX_EVENTS_LIMIT = 100;

/** The most log items one page examines, whatever the filters (shared/domain/events.ts): a rare type costs a bounded read and an empty page with has_more. */
export const MAX_EXAMINED_PER_PAGE_VALUE = 500;

/** How long the log keeps an event, as promised (the items live a day longer: shared/db/entities/event-log.ts). */
export const EVENTS_RETENTION_DAYS = 30;

export const EVENTS_MESSAGES = {
  badCursor: 'The after field must be a next_cursor this API returned for this account.',
  expiredCursor: `The after cursor has expired: events are kept ${EVENTS_RETENTION_DAYS} days. Read again without after to start from the oldest event kept.`,
} as const;

/** `types`: event types separated by commas (blanks and empty items ignored); any unknown one makes it invalid. */
const types = given(
  z.pipe(
    text().check(z.maxLength(1000)),
    z.transform((value, ctx) => commaList(value, WEBHOOK_EVENT_TYPES) ?? refuse(ctx, value, 'The selected :attribute is invalid.')),
  ),
);

const TIME_MESSAGE = 'The :attribute field must be a valid ISO 8601 date and time.';

/** An ISO 8601 time, normalized to UTC as events' timestamps are stored; one outside the years 0000-9999 is refused. */
const time = given(
  z.pipe(
    text().check(z.iso.datetime({ offset: true, message: TIME_MESSAGE })),
    z.transform((value, ctx) => {
      const utc = new Date(value).toISOString();
      return /^\d{4}-/.test(utc) ? utc : refuse(ctx, value, TIME_MESSAGE);
    }),
  ),
);

/** The longest cursor: a position as long as a sort key may be (1,024 bytes: a late event's), its time, base64url, and its tag. */
const MAX_CURSOR_LENGTH = 1500;

/** `after`: a next_cursor as handed out (base64url, a dot, base64url); whose it is, the domain checks. */
const cursor = given(
  text().check(z.maxLength(MAX_CURSOR_LENGTH), z.regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, { message: EVENTS_MESSAGES.badCursor })),
);

/** The window `created_gte` to `created_lt`, when both are given, must hold a moment: 422 on `created_lt` otherwise. */
export const eventsQuery = z.pipe(
  z.object({
    after: cursor,
    limit: positiveIntParam(DEFAULT_EVENTS_LIMIT, MAX_EVENTS_LIMIT),
    types,
    created_gte: time,
    created_lt: time,
    page: pageRefused('after'),
  }),
  z.transform((query, ctx) => {
    if (query.created_gte === undefined || query.created_lt === undefined || query.created_gte < query.created_lt) return query;
    return refuse(ctx, query.created_lt, 'The :attribute field must be a time after created_gte.', ['created_lt']);
  }),
);
export type EventsQuery = z.output<typeof eventsQuery>;
