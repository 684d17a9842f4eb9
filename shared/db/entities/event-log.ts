import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { queryItems, queryPages } from '#shared/db/query';
import { type TableRef, TTL_ATTRIBUTE } from '#shared/db/table-def';
import { merchantPk, parseStored, putItem, refusedItem } from './base';
import { batchPut } from './batch';
import { packedJson, packJson, unpackJson } from './packed-json';

/** A merchant's event log, by position: readers show only the committed prefix (docs/events.md#what-is-guaranteed-and-how). */
export const EVENT_LOG_RETENTION_DAYS = 31;

const SEQUENCE_DIGITS = 40;
/** Sorts after every position (they start with a digit): nothing from here on is read as part of the log. */
const ABOVE_POSITIONS = 'A';

const eventLogPk = (merchantId: string) => `${merchantPk(merchantId)}#EVENTS`;

/** The position of the `index`-th event of the write with stream sequence number `sequenceNumber`. */
export const eventPosition = (sequenceNumber: string, index: number) =>
  `${sequenceNumber.padStart(SEQUENCE_DIGITS, '0')}.${String(index).padStart(3, '0')}`;

export const LOG_START = '0';

/** Whether `value` could be a position (a late position is one position extended by another). */
export const isPosition = (value: string) => value === LOG_START || /^\d{40}\.\d{3}(~\d{40}\.\d{3})*$/.test(value);

export type LoggedEvent = { id: string; type: string; timestamp: string; data: Record<string, unknown> };

/** Any item of the log partition: an event, or a late event's marker (which has `late_at`). */
const storedSchema = z.looseObject({
  sk: z.string(),
  /** The position of the top event of the batch the item was written with; absent: the item's own. */
  commit_at: z.optional(z.string()),
  late_at: z.optional(z.string()),
  event_type: z.optional(z.string()),
  created_at: z.optional(z.string()),
  /** The event as webhooks deliver it (JSON: id, type, timestamp, data), deflated; plain JSON text in items written before. */
  event: z.optional(packedJson),
  /** Epoch seconds of the write the event came from. */
  logged_at: z.optional(z.number()),
});
type Stored = z.infer<typeof storedSchema>;

export type LogEntry = { position: string; event: LoggedEvent; loggedAt: number };

/** Times are stored as the API's filters compare them (UTC, milliseconds); one that does not parse, as it is. */
const isoTime = (time: string) => (Number.isNaN(Date.parse(time)) ? time : new Date(time).toISOString());

const expiry = (loggedAt: number) => loggedAt + EVENT_LOG_RETENTION_DAYS * 24 * 3600;

/** The log item of an event at `position`, committed by the item at `commitAt` (the bench seeds with it too). */
export const eventLogItem = (merchantId: string, position: string, entry: LogEntry, commitAt = position) => ({
  pk: eventLogPk(merchantId),
  sk: position,
  type: 'event_log',
  event_type: entry.event.type,
  created_at: isoTime(entry.event.timestamp),
  // Deflated: an order event of a few rows fits one write unit (1 KB an item) instead of two.
  event: packJson(JSON.stringify(entry.event)),
  logged_at: entry.loggedAt,
  commit_at: commitAt,
  [TTL_ATTRIBUTE]: expiry(entry.loggedAt),
});

const commitOf = (item: Stored) => item.commit_at ?? item.sk;

/** A consistent Query of the log's items, from `from` if given (never anything sorting above the positions). */
const logQuery = (merchantId: string, input: Pick<QueryCommandInput, 'ScanIndexForward' | 'ProjectionExpression'> = {}, from?: string) => ({
  KeyConditionExpression: from === undefined ? 'pk = :pk AND sk < :above' : 'pk = :pk AND sk BETWEEN :from AND :above',
  ExpressionAttributeValues: { ':pk': eventLogPk(merchantId), ':above': ABOVE_POSITIONS, ...(from === undefined ? {} : { ':from': from }) },
  ConsistentRead: true,
  ...input,
});

/** Whether the item is a commit: the top event of its batch, put after every other event of it. */
const isCommit = (item: Stored) => commitOf(item) === item.sk;

/** The first item of the log at or above `position`, read consistently (a Query: what the log's writers may do). */
const firstFrom = async (db: TableRef, merchantId: string, position: string): Promise<Stored | undefined> => {
  const [item] = await queryItems(db, logQuery(merchantId, { ProjectionExpression: 'sk, commit_at' }, position), 1);
  return item && parseStored('event log item', storedSchema, item);
};

/** Whether the log holds a commit at or above `position`, following the commits its items name (docs/events.md#what-is-guaranteed-and-how). */
const committedFrom = async (db: TableRef, merchantId: string, position: string): Promise<boolean> => {
  let item = await firstFrom(db, merchantId, position);
  while (item !== undefined && !isCommit(item)) item = await firstFrom(db, merchantId, commitOf(item));
  return item !== undefined;
};

/** The highest commit of the log (undefined while there is none), walking down past the batch being written or what a failed one left. */
const committedTop = async (db: TableRef, merchantId: string): Promise<string | undefined> => {
  // The top item is a commit unless a batch failed: read one, then more in doubling steps (a Query costs what it reads).
  let pages = 0;
  for await (const { Items } of queryPages(
    db,
    logQuery(merchantId, { ScanIndexForward: false, ProjectionExpression: 'sk, commit_at' }),
    () => 2 ** pages++,
  )) {
    for (const raw of Items ?? []) {
      const item = parseStored('event log item', storedSchema, raw);
      if (isCommit(item)) return item.sk;
    }
  }
  return undefined;
};

/** Puts a late event's marker at its own position, on `condition`: the marker's late position, or that of the item that refused it. */
const putMarker = async (db: TableRef, merchantId: string, entry: LogEntry, lateAt: string, condition: Record<string, unknown>) => {
  try {
    await putItem(db, {
      Item: {
        pk: eventLogPk(merchantId),
        sk: entry.position,
        type: 'event_log_marker',
        late_at: lateAt,
        [TTL_ATTRIBUTE]: expiry(entry.loggedAt),
      },
      ...condition,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    return lateAt;
  } catch (error) {
    const existing = refusedItem(error);
    // No item returned: taken as the event itself (its marker would name where it went).
    if (existing === undefined) return undefined;
    return parseStored('event log item', storedSchema, existing).late_at;
  }
};

/** The shortest late position above `top` for the event at `own` (docs/events.md#what-is-guaranteed-and-how). */
export const lateAbove = (top: string, own: string): string => {
  const steps = top.split('~');
  for (let kept = 1; kept < steps.length; kept++) {
    const candidate = [...steps.slice(0, kept), own].join('~');
    if (candidate > top) return candidate;
  }
  return `${top}~${own}`;
};

/** Where an event at or below the committed top goes: its marker's late position, or undefined when logged at its own. */
const latePosition = async (db: TableRef, merchantId: string, top: string, entry: LogEntry): Promise<string | undefined> => {
  const lateAt = lateAbove(top, entry.position);
  const marked = await putMarker(db, merchantId, entry, lateAt, { ConditionExpression: 'attribute_not_exists(pk)' });
  if (marked === undefined || marked === lateAt || marked > top || (await firstFrom(db, merchantId, marked))?.sk === marked) return marked;
  return putMarker(db, merchantId, entry, lateAt, {
    ConditionExpression: 'late_at = :marked',
    ExpressionAttributeValues: { ':marked': marked },
  });
};

/** Appends a batch's events of one merchant, its highest position (its commit) put last (docs/events.md#what-is-guaranteed-and-how). */
export const appendToEventLog = async (
  db: TableRef,
  merchantId: string,
  entries: readonly LogEntry[],
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<void> => {
  if (entries.length === 0) return;
  const top = await committedTop(db, merchantId);
  const committed = (position: string) => top !== undefined && position <= top;
  const placed = await Promise.all(
    entries.map(async (entry) => {
      if (top === undefined || !committed(entry.position)) return { entry, position: entry.position };
      // A late event is logged, and kept, from when it is placed: a cursor handed out before then has not seen it.
      return {
        entry: { ...entry, loggedAt: Math.max(entry.loggedAt, nowSeconds) },
        position: await latePosition(db, merchantId, top, entry),
      };
    }),
  );
  const writes = placed.filter((write): write is { entry: LogEntry; position: string } => write.position !== undefined);
  const commitAt = writes.reduce((highest, { position }) => (!committed(position) && position > highest ? position : highest), LOG_START);
  // A late event put again at a position already committed commits itself: its item stays visible.
  const items = writes.map(({ entry, position }) => eventLogItem(merchantId, position, entry, committed(position) ? position : commitAt));
  const commit = items.find((item) => item.sk === commitAt);
  const others = items.filter((item) => item !== commit);
  await batchPut(db, others);
  if (commit !== undefined) await putItem(db, { Item: commit });
};

/** `loggedGte`: only events logged at or after that time (epoch seconds): a first read passes over what is about to expire. */
export type LogFilter = { types?: readonly string[]; createdGte?: string; createdLt?: string; loggedGte?: number };

/** Whether a log item is an event that passes the filter (times compare as stored: ISO 8601 in UTC). */
const matches = (item: Stored, filter: LogFilter) =>
  item.late_at === undefined &&
  item.event !== undefined &&
  (filter.types === undefined || filter.types.length === 0 || filter.types.includes(item.event_type ?? '')) &&
  (filter.createdGte === undefined || (item.created_at ?? '') >= filter.createdGte) &&
  (filter.createdLt === undefined || (item.created_at ?? '') < filter.createdLt) &&
  (filter.loggedGte === undefined || (item.logged_at ?? 0) >= filter.loggedGte);

const logItem = (item: Stored) => ({
  position: item.sk,
  event: JSON.parse(item.event === undefined ? '{}' : unpackJson(item.event)) as LoggedEvent,
  eventType: item.event_type ?? '',
  createdAt: item.created_at ?? '',
  loggedAt: item.logged_at ?? 0,
});

/** Reads up to `maxExamined` log items after `after`, in doubling steps from one more than the page, until the page is full. */
const examine = async (db: TableRef, merchantId: string, after: string, limit: number, maxExamined: number, filter: LogFilter) => {
  const examined: Stored[] = [];
  let matched = 0;
  let step = limit + 1;
  const pages = queryPages(
    db,
    logQuery(merchantId),
    () => Math.min(maxExamined - examined.length, Math.max(limit + 1 - matched, step)),
    after === LOG_START ? undefined : { pk: eventLogPk(merchantId), sk: after },
  );
  for await (const { Items, LastEvaluatedKey } of pages) {
    for (const raw of Items ?? []) {
      const item = parseStored('event log item', storedSchema, raw);
      examined.push(item);
      if (matches(item, filter)) matched++;
    }
    if (LastEvaluatedKey === undefined) return { examined, ended: true };
    step *= 2;
    if (examined.length >= maxExamined || matched > limit) break;
  }
  return { examined, ended: false };
};

/** Up to `limit` committed events after `after` that pass `filter`, examining at most `maxExamined` items, and where it stopped. */
export const eventLogPage = async (
  db: TableRef,
  merchantId: string,
  after: string,
  limit: number,
  maxExamined: number,
  filter: LogFilter = {},
) => {
  const { examined, ended } = await examine(db, merchantId, after, limit, maxExamined, filter);
  let reached = examined.reduce((highest, item) => (isCommit(item) && item.sk > highest ? item.sk : highest), after);
  const highestCommit = examined.reduce((highest, item) => (commitOf(item) > highest ? commitOf(item) : highest), LOG_START);
  if (highestCommit > reached && (await committedFrom(db, merchantId, highestCommit))) reached = highestCommit;
  const firstUncommitted = examined.findIndex((item) => commitOf(item) > reached);
  const committed = firstUncommitted === -1 ? examined : examined.slice(0, firstUncommitted);
  const items: ReturnType<typeof logItem>[] = [];
  let lastExamined = after;
  let lastExaminedAt: number | undefined;
  for (const item of committed) {
    if (matches(item, filter)) {
      if (items.length === limit) return { items, lastExamined, lastExaminedAt, more: true };
      items.push(logItem(item));
    }
    lastExamined = item.sk;
    lastExaminedAt = item.logged_at ?? lastExaminedAt;
  }
  return { items, lastExamined, lastExaminedAt, more: !ended && firstUncommitted === -1 };
};
