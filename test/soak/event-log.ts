import type { InvariantResult } from './checks';
import { send } from './client';
import type { SoakMerchant } from './fixtures';

/**
 * The soak's invariant for the event log (GET /api/v2/events): a consumer per merchant polls the
 * log with its cursor through the whole run, faults included; once the feed has settled it reads
 * on to the end, and a fresh read from the start must give exactly the sequence it saw (no event
 * behind a cursor it had, none twice), holding every event the workload's changes made, each
 * order's in the order they happened.
 */

type LogEvent = { id: string };
type Page = { data: LogEvent[]; meta: { next_cursor: string; has_more: boolean } };

const POLL_EVERY_MS = 1_000;

/** Reads from `after` until has_more is false; undefined when a page was not answered 200 after the client's retries. */
const readOn = async (merchant: SoakMerchant, after: string | undefined) => {
  const events: LogEvent[] = [];
  let cursor = after;
  for (;;) {
    const query = `limit=100${cursor === undefined ? '' : `&after=${encodeURIComponent(cursor)}`}`;
    const response = await send({ url: merchant.url, token: merchant.token, method: 'GET', path: `/api/v2/events?${query}` }, false);
    if (response.last.status !== 200) return undefined;
    const page = response.json as Page;
    events.push(...page.data);
    cursor = page.meta.next_cursor;
    if (!page.meta.has_more) return { events, cursor };
  }
};

export type LogPollers = {
  /** Stops polling without checking (the run failed). */
  halt: () => void;
  stop: (expectedIds: (merchant: SoakMerchant) => string[]) => Promise<InvariantResult>;
};

/** Starts one polling consumer per merchant; `stop` reads on to the end, reads afresh and checks. */
export const startLogPollers = (merchants: readonly SoakMerchant[]): LogPollers => {
  let running = true;
  const consumers = merchants.map((merchant) => {
    const seen: string[] = [];
    let cursor: string | undefined;
    const poll = async () => {
      const page = await readOn(merchant, cursor);
      if (page === undefined) return;
      seen.push(...page.events.map((event) => event.id));
      cursor = page.cursor;
    };
    const loop = (async () => {
      while (running) {
        await poll();
        await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
      }
      await poll();
    })();
    return { merchant, seen, loop };
  });
  return {
    halt: () => {
      running = false;
    },
    stop: async (expectedIds) => {
      running = false;
      const result: InvariantResult = {
        id: 'event-log',
        title: 'The event log read by polling holds every event once, in order, none behind a cursor',
        checked: 0,
        violations: [],
        notes: new Map(),
      };
      for (const { merchant, seen, loop } of consumers) {
        await loop;
        const fresh = (await readOn(merchant, undefined))?.events.map((event) => event.id);
        const where = `${merchant.key} (${merchant.stage})`;
        if (fresh === undefined) {
          result.violations.push(`${where}: the fresh read of the log was not answered`);
          continue;
        }
        result.checked += fresh.length;
        const firstDifference = fresh.findIndex((id, index) => seen[index] !== id);
        if (firstDifference !== -1 || seen.length !== fresh.length)
          result.violations.push(
            `${where}: the poller saw ${seen.length} events, a fresh read ${fresh.length}; first difference at ${firstDifference} (${seen[firstDifference]} vs ${fresh[firstDifference]})`,
          );
        const twice = fresh.filter((id, index) => fresh.indexOf(id) !== index);
        if (twice.length > 0) result.violations.push(`${where}: logged more than once: ${twice.slice(0, 3).join(', ')}`);
        const logged = new Set(fresh);
        const missing = expectedIds(merchant).filter((id) => !logged.has(id));
        if (missing.length > 0)
          result.violations.push(`${where}: ${missing.length} events not in the log, e.g. ${missing.slice(0, 3).join(', ')}`);
        const versions = new Map<string, number>();
        for (const id of fresh) {
          const match = /^evt_([0-9a-f-]{36})_v(\d+)$/.exec(id);
          if (!match?.[1]) continue;
          const version = Number(match[2]);
          if ((versions.get(match[1]) ?? 0) > version) result.violations.push(`${where}: ${id} logged after a later version of its order`);
          versions.set(match[1], version);
        }
      }
      return result;
    },
  };
};
