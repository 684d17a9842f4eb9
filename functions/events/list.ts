import { route } from '#functions/routes';
import { listEvents } from '#shared/domain/events';
import { apiHandler } from '#shared/http/api-handler';
import { eventsQuery } from '#shared/schemas/events';

/** The merchant's events, oldest first, after a cursor (meta.next_cursor, on every page). */
export const handler = apiHandler(route('events-list'), { query: eventsQuery }, async ({ merchant, query }) => {
  const page = await listEvents(merchant.id, query);
  return { data: page.events, meta: { next_cursor: page.next_cursor, has_more: page.has_more } };
});
