import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { type TableRef, TTL_ATTRIBUTE } from '#shared/db/table-def';
import { errorName } from '#shared/errors';
import { merchantPk, parseStored } from './base';
import { batchPut } from './batch';
import { moveForward } from './forward';

/**
 * A merchant's event log: every webhook event of the merchant, once, in one partition of its own,
 * `M#<merchant>#EVENTS` (no key is shared by merchants), sorted by position. A position is the
 * stream sequence number of the write the event came from, padded, then the event's index within
 * that write: positions only grow with the stream, which brings a merchant's writes in order.
 *
 * The `HEAD` item of the partition (it sorts after every position) is the committed high-water
 * mark: the change feed moves it only after every event of a batch up to it was written, and
 * readers show nothing above it, so a position once handed out never gains an event behind it.
 *
 * A write's event arriving below the head (its stream record was parked and replayed after later
 * ones were logged) is logged at a late position just above the head instead, and a marker at its
 * own position remembers where, so it is logged once whatever the retries.
 */
export const EVENT_LOG_RETENTION_DAYS = 31;

const SEQUENCE_DIGITS = 40;
const HEAD_SK = 'HEAD';

export const eventLogPk = (merchantId: string) => `${merchantPk(merchantId)}#EVENTS`;

/** The position of the `index`-th event of the write with stream sequence number `sequenceNumber`. */
export const eventPosition = (sequenceNumber: string, index: number) =>
  `${sequenceNumber.padStart(SEQUENCE_DIGITS, '0')}.${String(index).padStart(3, '0')}`;

/** A position below every position: the start of the log. */
export const LOG_START = '0';

/** Whether `value` could be a position (a late position is one position extended by another). */
export const isPosition = (value: string) => value === LOG_START || /^\d{40}\.\d{3}(~\d{40}\.\d{3})*$/.test(value);

export type LoggedEvent = { id: string; type: string; timestamp: string; data: Record<string, unknown> };

const logItemSchema = z.looseObject({
  sk: z.string(),
  event_type: z.string(),
  created_at: z.string(),
  /** The event as webhooks deliver it (JSON): id, type, timestamp, data. */
  event: z.string(),
  /** Epoch seconds of the write the event came from. */
  logged_at: z.number(),
});
const markerSchema = z.looseObject({ late_at: z.string() });
const headSchema = z.looseObject({ position: z.string(), logged_at: z.number() });

export type LogEntry = { position: string; event: LoggedEvent; loggedAt: number };
export type LogItem = { position: string; event: LoggedEvent; eventType: string; createdAt: string; loggedAt: number };
export type LogHead = { position: string; loggedAt: number };

/** Times are stored as the API's filters compare them (UTC, milliseconds); one that does not parse, as it is. */
const isoTime = (time: string) => (Number.isNaN(Date.parse(time)) ? time : new Date(time).toISOString());

const expiry = (loggedAt: number) => loggedAt + EVENT_LOG_RETENTION_DAYS * 24 * 3600;

/** The log item of an event at `position` (the bench seeds with it too). */
export const eventLogItem = (merchantId: string, position: string, entry: LogEntry) => ({
  pk: eventLogPk(merchantId),
  sk: position,
  type: 'event_log',
  event_id: entry.event.id,
  event_type: entry.event.type,
  created_at: isoTime(entry.event.timestamp),
  event: JSON.stringify(entry.event),
  logged_at: entry.loggedAt,
  [TTL_ATTRIBUTE]: expiry(entry.loggedAt),
});

const putEvent = ({ ddb, table }: TableRef, merchantId: string, position: string, entry: LogEntry) =>
  ddb.send(new PutCommand({ TableName: table, Item: eventLogItem(merchantId, position, entry) }));

/** The head item (the bench seeds with it too). */
export const eventLogHeadItem = (merchantId: string, head: LogHead) => ({
  pk: eventLogPk(merchantId),
  sk: HEAD_SK,
  type: 'event_log_head',
  position: head.position,
  logged_at: head.loggedAt,
});

/** The committed head of a merchant's log; undefined while nothing was logged. */
export const readEventLogHead = async ({ ddb, table }: TableRef, merchantId: string): Promise<LogHead | undefined> => {
  const { Items } = await ddb.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk AND sk = :head',
      ExpressionAttributeValues: { ':pk': eventLogPk(merchantId), ':head': HEAD_SK },
      ConsistentRead: true,
    }),
  );
  const item = Items?.[0];
  if (item === undefined) return undefined;
  const head = parseStored('event log head', headSchema, item);
  return { position: head.position, loggedAt: head.logged_at };
};

/**
 * Logs an event that arrived below the head: a marker at its own position names the late position
 * (put only where nothing is: the event itself, or a marker of an earlier try, wins), then the event
 * is put there. Returns the position it is logged at.
 */
const putLateEvent = async (db: TableRef, merchantId: string, head: string, entry: LogEntry): Promise<string> => {
  const lateAt = `${head}~${entry.position}`;
  try {
    await db.ddb.send(
      new PutCommand({
        TableName: db.table,
        Item: {
          pk: eventLogPk(merchantId),
          sk: entry.position,
          type: 'event_log_marker',
          late_at: lateAt,
          [TTL_ATTRIBUTE]: expiry(entry.loggedAt),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (errorName(error) !== 'ConditionalCheckFailedException') throw error;
    const existing = (error as { Item?: Record<string, unknown> }).Item;
    // The event itself is there: logged before the head passed it.
    if (existing === undefined || existing.late_at === undefined) return entry.position;
    const marker = parseStored('event log marker', markerSchema, existing);
    await putEvent(db, merchantId, marker.late_at, entry);
    return marker.late_at;
  }
  await putEvent(db, merchantId, lateAt, entry);
  return lateAt;
};

/** Moves the head up to `head` (never down: a head already past it stays). */
const advanceHead = (db: TableRef, merchantId: string, head: LogHead) =>
  moveForward(db, { pk: eventLogPk(merchantId), sk: HEAD_SK }, 'position', {
    type: 'event_log_head',
    position: head.position,
    logged_at: head.loggedAt,
  });

/**
 * Appends a batch's events of one merchant, then commits the head past them: the events above the
 * head with BatchWriteItem, 25 a call; one below it (see putLateEvent) on its own. Idempotent: an
 * event already logged is put again at the same position, with the same content. Throws when any
 * write failed: the head is then left where it was.
 */
export const appendToEventLog = async (db: TableRef, merchantId: string, entries: readonly LogEntry[]): Promise<void> => {
  if (entries.length === 0) return;
  const head = await readEventLogHead(db, merchantId);
  const late = entries.filter((entry) => head !== undefined && entry.position <= head.position);
  const onTop = entries.filter((entry) => !late.includes(entry));
  const [, latePositions] = await Promise.all([
    batchPut(
      db,
      onTop.map((entry) => eventLogItem(merchantId, entry.position, entry)),
    ),
    Promise.all(late.map((entry) => putLateEvent(db, merchantId, head?.position ?? LOG_START, entry))),
  ]);
  const positions = [
    ...onTop.map((entry) => ({ entry, position: entry.position })),
    ...late.map((entry, index) => ({ entry, position: latePositions[index] ?? entry.position })),
  ];
  let top = { position: positions[0]?.position ?? LOG_START, loggedAt: (entries[0] as LogEntry).loggedAt };
  for (const { entry, position } of positions) if (position > top.position) top = { position, loggedAt: entry.loggedAt };
  if (head === undefined || top.position > head.position) await advanceHead(db, merchantId, top);
};

export type LogFilter = { types?: readonly string[]; createdGte?: string; createdLt?: string };

const filterExpression = (filter: LogFilter) => {
  const parts: string[] = ['attribute_not_exists(late_at)'];
  const values: Record<string, unknown> = {};
  if (filter.types && filter.types.length > 0) {
    parts.push(`event_type IN (${filter.types.map((_, index) => `:t${index}`).join(', ')})`);
    filter.types.forEach((type, index) => {
      values[`:t${index}`] = type;
    });
  }
  if (filter.createdGte !== undefined) {
    parts.push('created_at >= :gte');
    values[':gte'] = filter.createdGte;
  }
  if (filter.createdLt !== undefined) {
    parts.push('created_at < :lt');
    values[':lt'] = filter.createdLt;
  }
  return { FilterExpression: parts.join(' AND '), values };
};

export type LogPage = {
  items: LogItem[];
  /** The last position examined (matched or not); `after` itself when nothing was. */
  lastExamined: string;
  /** logged_at of the last item examined; undefined when nothing was. */
  lastExaminedAt: number | undefined;
  /** Whether positions up to the head remain unexamined. */
  more: boolean;
};

/**
 * Up to `limit` events after `after` and at or below `head`, oldest first, that pass `filter`,
 * examining at most `maxExamined` log items whatever the filter (each Query is bounded by its
 * Limit, which DynamoDB applies before the filter), with consistent reads: every event at or below
 * the head was written before the head was, so a consistent read sees them all.
 */
export const eventLogPage = async (
  { ddb, table }: TableRef,
  merchantId: string,
  after: string,
  head: string,
  limit: number,
  maxExamined: number,
  filter: LogFilter = {},
): Promise<LogPage> => {
  const { FilterExpression, values } = filterExpression(filter);
  const items: LogItem[] = [];
  let examined = 0;
  let lastExamined = after;
  let lastExaminedAt: number | undefined;
  let step = limit + 1;
  let startKey: Record<string, unknown> | undefined = after === LOG_START ? undefined : { pk: eventLogPk(merchantId), sk: after };
  while (examined < maxExamined) {
    const { Items, LastEvaluatedKey, ScannedCount } = await ddb.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :head',
        FilterExpression,
        ExpressionAttributeValues: { ':pk': eventLogPk(merchantId), ':from': LOG_START, ':head': head, ...values },
        // One more than the page: a page that fills up knows whether anything follows. A filter that
        // skipped items reads on in doubling steps, so a rare type costs a few calls, not one per page size.
        Limit: Math.min(maxExamined - examined, Math.max(limit + 1 - items.length, step)),
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    examined += ScannedCount ?? 0;
    for (const raw of Items ?? []) {
      const item = parseStored('event log entry', logItemSchema, raw);
      if (items.length === limit) return { items, lastExamined, lastExaminedAt, more: true };
      items.push({
        position: item.sk,
        event: JSON.parse(item.event) as LoggedEvent,
        eventType: item.event_type,
        createdAt: item.created_at,
        loggedAt: item.logged_at,
      });
      lastExamined = item.sk;
      lastExaminedAt = item.logged_at;
    }
    if (LastEvaluatedKey === undefined) return { items, lastExamined: head, lastExaminedAt, more: false };
    startKey = LastEvaluatedKey;
    step *= 2;
    lastExamined = String(LastEvaluatedKey.sk);
    // The last item examined was filtered out: its time is unknown, so the last matched one's stands (earlier, so safe).
  }
  return { items, lastExamined, lastExaminedAt, more: true };
};
