/**
 * An event poller: reads GET /api/v2/events from where it stopped, prints each event, keeps its
 * cursor in a file, so a run every hour (or a loop) sees every event exactly once, in order.
 *   API_URL=http://127.0.0.1:3000 API_TOKEN=live_... CURSOR_FILE=.events-cursor npx tsx examples/poll-events.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const file = process.env.CURSOR_FILE ?? '.events-cursor';
let after = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
for (let more = true; more; ) {
  const query = new URLSearchParams({ limit: '100', ...(after ? { after } : {}) });
  const response = await fetch(`${process.env.API_URL}/api/v2/events?${query}`, {
    headers: { Authorization: `Bearer ${process.env.API_TOKEN}` },
  });
  const body = (await response.json()) as {
    data: { id: string; type: string }[];
    meta: { next_cursor: string; has_more: boolean };
    errors: unknown;
  };
  if (!response.ok) throw new Error(`${response.status} ${JSON.stringify(body.errors)}`); // 422 on after: expired, start afresh
  for (const event of body.data) console.log(event.id, event.type, JSON.stringify(event));
  writeFileSync(file, body.meta.next_cursor); // after handling the page: a crash re-reads it, never skips it
  ({ next_cursor: after, has_more: more } = body.meta);
}
