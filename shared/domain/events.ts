import { currentStage } from '#shared/config';
import { functionTable } from '#shared/db/client';
import { EVENT_LOG_RETENTION_DAYS, eventLogPage, LOG_START } from '#shared/db/entities/event-log';
import { invalidField } from '#shared/errors';
import { EVENTS_MESSAGES, EVENTS_RETENTION_DAYS, type EventsQuery, MAX_EXAMINED_PER_PAGE_VALUE } from '#shared/schemas/events';
import { type Cursor, DAY_SECONDS, decodeCursor, encodeCursor } from './event-cursor';

/** How long before its items' TTL a cursor is refused: clocks differ, and DynamoDB may delete an item as soon as it is due. */
const EXPIRY_MARGIN_SECONDS = 3600;

/** GET /api/v2/events: committed events after a cursor, oldest first; another's cursor or an expired one is a 422 on `after`. */
export const listEvents = async (merchantId: string, query: EventsQuery, now = Date.now()) => {
  const stage = currentStage();
  const nowSeconds = Math.floor(now / 1000);
  // A first read starts EVENTS_RETENTION_DAYS back; a cursor stands while what follows it is stored (a day longer).
  let after: Cursor = { position: LOG_START, since: nowSeconds - EVENTS_RETENTION_DAYS * DAY_SECONDS, floor: true };
  if (query.after !== undefined) {
    const decoded = decodeCursor(stage, merchantId, query.after);
    if (decoded === undefined) throw invalidField('after', EVENTS_MESSAGES.badCursor);
    if (decoded.since < nowSeconds - EVENT_LOG_RETENTION_DAYS * DAY_SECONDS + EXPIRY_MARGIN_SECONDS)
      throw invalidField('after', EVENTS_MESSAGES.expiredCursor);
    after = decoded;
  }
  const page = await eventLogPage(functionTable, merchantId, after.position, query.limit, MAX_EXAMINED_PER_PAGE_VALUE, {
    types: query.types,
    createdGte: query.created_gte,
    createdLt: query.created_lt,
    ...(after.floor ? { loggedGte: after.since } : {}),
  });
  // Caught up with what is committed: whatever follows is logged from now on; else from the last examined event's time.
  const since = page.more ? Math.max(page.lastExaminedAt ?? after.since, after.since) : nowSeconds;
  // A first read passes over events older than its window until it has examined one inside it (up to 500 a page).
  const floor = after.floor === true && page.more && (page.lastExaminedAt ?? 0) < after.since;
  return {
    events: page.items.map((item) => item.event),
    next_cursor: encodeCursor(stage, merchantId, { position: page.lastExamined, since, ...(floor ? { floor } : {}) }),
    has_more: page.more,
  };
};
