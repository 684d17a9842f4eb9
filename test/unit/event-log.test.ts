import { BatchWriteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { seededRandom } from '#local/faults';
import { reactionsTo } from '#shared/changes/feed';
import { appendToEventLog, eventLogPage, eventPosition, LOG_START, type LogEntry, lateAbove } from '#shared/db/entities/event-log';
import { decodeCursor, encodeCursor } from '#shared/domain/event-cursor';
import { listEvents } from '#shared/domain/events';
import { type EventsQuery, eventsQuery } from '#shared/schemas/events';
import { ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT, MERCHANT_PK, OTHER_MERCHANT_ID, storedPendingRequest } from './support/fixtures';

const db = { ddb: ddbMock as never, table: 'unit-table' };
const LOG_PK = `${MERCHANT_PK}#EVENTS`;

const entry = (sequence: string, index = 0): LogEntry => ({
  position: eventPosition(sequence, index),
  event: { id: `evt_${sequence}_${index}`, type: 'order.created', timestamp: '2026-03-01T10:00:00.000Z', data: {} },
  loggedAt: 1_772_000_000,
});

const record = (after: Record<string, unknown>, before: Record<string, unknown> | undefined, sequence: string): DynamoDBRecord => ({
  eventName: before ? 'MODIFY' : 'INSERT',
  dynamodb: {
    ApproximateCreationDateTime: 1_772_000_000,
    Keys: marshall({ pk: after.pk, sk: after.sk }) as never,
    NewImage: marshall(after, { removeUndefinedValues: true }) as never,
    ...(before ? { OldImage: marshall(before, { removeUndefinedValues: true }) as never } : {}),
    SequenceNumber: sequence,
  },
});

beforeEach(() => {
  resetAwsMocks();
  ddbMock.on(PutCommand).resolves({});
  ddbMock.on(BatchWriteCommand).resolves({});
  ddbMock.on(UpdateCommand).resolves({});
  ddbMock.on(QueryCommand).resolves({ Items: [] });
});

describe('the change feed plans the event log', () => {
  it('logs every webhook event of a write at the position of its stream record, in the merchant of the item', () => {
    // Prepare
    const pending = storedPendingRequest();

    // Act
    const created = reactionsTo(record(pending, undefined, '4200000000000000000123'));
    const decided = reactionsTo(record({ ...pending, status: 'accepted', decided_at: 'T2' }, pending, '4200000000000000000124'));

    // Assess
    expect(created.eventLog).toEqual({
      merchantId: MERCHANT.id,
      entries: [{ position: eventPosition('4200000000000000000123', 0), event: created.webhookEvents?.events[0], loggedAt: 1_772_000_000 }],
    });
    expect(decided.eventLog?.entries.map(({ position, event }) => [position, event.type])).toEqual([
      [eventPosition('4200000000000000000124', 0), 'affiliate_request.accepted'],
    ]);
  });

  it('orders positions as the stream orders records, whatever their number of digits', () => {
    expect(eventPosition('999', 1) < eventPosition('1000', 0)).toBe(true);
    expect(eventPosition('1000', 0) < eventPosition('1000', 1)).toBe(true);
  });
});

/**
 * The log partition of one merchant in memory, served to the mocked client as DynamoDB serves the
 * calls the log makes (Query with its key conditions, Limit, order and start key; PutItem with a
 * condition; BatchWriteItem); `beforeWrite` runs before every write is applied, and may apply part
 * of it and throw (a failed or lost write).
 */
const fakeLog = (
  beforeWrite: (apply: (items: Record<string, unknown>[]) => void, items: Record<string, unknown>[]) => Promise<void> = async () => {},
) => {
  const items = new Map<string, Record<string, unknown>>();
  const apply = (written: Record<string, unknown>[]) => {
    for (const item of written) items.set(String(item.sk), item);
  };
  ddbMock.on(QueryCommand).callsFake(async (input) => {
    const values = input.ExpressionAttributeValues;
    const from = String(values[':from'] ?? '');
    const start = input.ExclusiveStartKey?.sk as string | undefined;
    const ascending = input.ScanIndexForward !== false;
    let keys = [...items.keys()].filter((sk) => sk >= from && sk < values[':above']).sort();
    if (!ascending) keys.reverse();
    if (start !== undefined) keys = keys.filter((sk) => (ascending ? sk > start : sk < start));
    const page = keys.slice(0, input.Limit ?? keys.length);
    const more = page.length < keys.length;
    return {
      Items: page.map((sk) => items.get(sk)),
      ScannedCount: page.length,
      ...(more ? { LastEvaluatedKey: { pk: LOG_PK, sk: page.at(-1) } } : {}),
    };
  });
  ddbMock.on(PutCommand).callsFake(async (input) => {
    const existing = items.get(input.Item.sk);
    const refused =
      (input.ConditionExpression === 'attribute_not_exists(pk)' && existing !== undefined) ||
      (input.ConditionExpression === 'late_at = :marked' && existing?.late_at !== input.ExpressionAttributeValues[':marked']);
    if (refused) {
      // As DynamoDB answers through the document client: the old item in wire format.
      throw Object.assign(new Error('refused'), {
        name: 'ConditionalCheckFailedException',
        ...(existing ? { Item: marshall(existing) } : {}),
      });
    }
    await beforeWrite(apply, [input.Item]);
    apply([input.Item]);
    return {};
  });
  ddbMock.on(BatchWriteCommand).callsFake(async (input) => {
    const written = (input.RequestItems['unit-table'] ?? []).map(
      (request: { PutRequest: { Item: Record<string, unknown> } }) => request.PutRequest.Item,
    );
    await beforeWrite(apply, written);
    apply(written);
    return {};
  });
  return items;
};

describe('appending to the event log', () => {
  it('puts a batch in one write per event: the others in one BatchWriteItem call per 25, then its top event, which commits them', async () => {
    // Prepare
    const items = fakeLog();

    // Act
    await appendToEventLog(db, MERCHANT.id, [entry('500'), entry('501'), entry('501', 1)]);

    // Assess
    const batch = ddbMock.commandCalls(BatchWriteCommand)[0]?.args[0].input.RequestItems?.['unit-table'] ?? [];
    expect(batch.map((request) => [request.PutRequest?.Item?.sk, request.PutRequest?.Item?.commit_at])).toEqual([
      [eventPosition('500', 0), eventPosition('501', 1)],
      [eventPosition('501', 0), eventPosition('501', 1)],
    ]);
    expect(ddbMock.commandCalls(PutCommand).map((call) => [call.args[0].input.Item?.sk, call.args[0].input.Item?.commit_at])).toEqual([
      [eventPosition('501', 1), eventPosition('501', 1)],
    ]);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
    expect(items.size).toBe(3);
  });

  it('leaves the batch uncommitted when a write failed, so no reader sees past the gap', async () => {
    // Prepare: the first events are written, the batch's top is not
    const items = fakeLog(async (_, written) => {
      if (written.some((item) => item.sk === eventPosition('502', 0)))
        throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
    });

    // Act
    const appended = appendToEventLog(db, MERCHANT.id, [entry('500'), entry('501'), entry('502')]);

    // Assess
    await expect(appended).rejects.toThrow('throttled');
    expect(items.size).toBe(2);
    const page = await eventLogPage(db, MERCHANT.id, LOG_START, 25, 500);
    expect(page).toEqual({ items: [], lastExamined: LOG_START, lastExaminedAt: undefined, more: false });
  });

  it('stores each event deflated and reads it back as it was, beside events stored as plain JSON before', async () => {
    // Prepare: an event logged before events were deflated, then one logged now
    const items = fakeLog();
    const old = entry('400');
    items.set(old.position, {
      pk: `M#${MERCHANT.id}#EVENTS`,
      sk: old.position,
      event_type: old.event.type,
      created_at: old.event.timestamp,
      event: JSON.stringify(old.event),
    });
    const now = {
      ...entry('500'),
      event: {
        ...entry('500').event,
        data: { order: { rows: Array.from({ length: 5 }, (_, n) => ({ product_name: `Ünïcode 😀 ${n}` })) } },
      },
    };

    // Act
    await appendToEventLog(db, MERCHANT.id, [now]);
    const page = await eventLogPage(db, MERCHANT.id, LOG_START, 25, 500);

    // Assess
    const stored = items.get(now.position)?.event as Uint8Array;
    expect(stored).toBeInstanceOf(Uint8Array);
    expect(stored.length).toBeLessThan(JSON.stringify(now.event).length);
    expect(page.items.map((item) => item.event)).toEqual([old.event, now.event]);
  });

  it('logs an event that arrives below the committed top just above it, once, with a marker at its own position', async () => {
    // Prepare: 900 is committed; the event of record 700 (parked, replayed) was never logged
    const items = fakeLog();
    await appendToEventLog(db, MERCHANT.id, [entry('900')]);
    const late = entry('700');

    // Act
    await appendToEventLog(db, MERCHANT.id, [late]);
    await appendToEventLog(db, MERCHANT.id, [late]);

    // Assess
    const lateAt = `${eventPosition('900', 0)}~${late.position}`;
    expect(items.get(late.position)).toEqual(expect.objectContaining({ late_at: lateAt }));
    expect(items.get(lateAt)).toEqual(expect.objectContaining({ commit_at: lateAt }));
    const page = await eventLogPage(db, MERCHANT.id, LOG_START, 25, 500);
    expect(page.items.map((item) => item.event.id)).toEqual([entry('900').event.id, late.event.id]);
  });

  it('keeps late events replayed one after another two steps long, so the cursors past them stay within what the API takes', async () => {
    // Prepare: 900 is committed; eight parked records of the merchant are replayed one by one, in stream order.
    const items = fakeLog();
    await appendToEventLog(db, MERCHANT.id, [entry('900')]);
    const late = Array.from({ length: 8 }, (_, index) => entry(String(700 + index)));

    // Act
    for (const event of late) await appendToEventLog(db, MERCHANT.id, [event]);

    // Assess: each just above the previous, read in that order.
    const placed = late.map((event) => String(items.get(event.position)?.late_at));
    expect(placed).toEqual(late.map((event) => `${eventPosition('900', 0)}~${event.position}`));
    const page = await eventLogPage(db, MERCHANT.id, LOG_START, 25, 500);
    expect(page.items.map((item) => item.event.id)).toEqual([entry('900'), ...late].map((event) => event.event.id));
  });

  it('places a late event that sorts below the late one at the top one step further, still above it', () => {
    const top = `${eventPosition('900', 0)}~${eventPosition('705', 0)}`;
    expect(lateAbove(top, eventPosition('702', 0))).toBe(`${top}~${eventPosition('702', 0)}`);
    expect(lateAbove(top, eventPosition('706', 0))).toBe(`${eventPosition('900', 0)}~${eventPosition('706', 0)}`);
    expect(lateAbove(eventPosition('900', 0), eventPosition('702', 0))).toBe(`${eventPosition('900', 0)}~${eventPosition('702', 0)}`);
  });

  it('keeps a late event from when it is placed: logged and kept 31 days from the replay, not from its first write', async () => {
    // Prepare: 900 is committed; record 700 was parked three days and is replayed now.
    const items = fakeLog();
    const now = 1_772_000_000;
    await appendToEventLog(db, MERCHANT.id, [entry('900')], now);
    const late = { ...entry('700'), loggedAt: now - 3 * 86_400 };

    // Act
    await appendToEventLog(db, MERCHANT.id, [late], now);

    // Assess: a cursor handed out before the replay finds it for as long as any other event it has not seen.
    const placed = items.get(`${eventPosition('900', 0)}~${late.position}`);
    expect(placed).toEqual(expect.objectContaining({ logged_at: now, expires_at: now + 31 * 86_400 }));
  });

  it('moves a late event whose put failed above the top the log has committed since, so a reader past its old place still gets it', async () => {
    // Prepare: 900 is committed; the replay of record 700 puts its marker, and then its own put fails.
    const lateAt = `${eventPosition('900', 0)}~${entry('700').position}`;
    const items = fakeLog(async (_, written) => {
      if (written.some((item) => item.sk === lateAt)) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
    });
    await appendToEventLog(db, MERCHANT.id, [entry('900')]);
    await expect(appendToEventLog(db, MERCHANT.id, [entry('700')])).rejects.toThrow('throttled');
    // The live feed commits 1000, and a reader reads up to it.
    await appendToEventLog(db, MERCHANT.id, [entry('1000')]);
    const seen = await eventLogPage(db, MERCHANT.id, LOG_START, 25, 500);

    // Act: the replay again.
    await appendToEventLog(db, MERCHANT.id, [entry('700')]);

    // Assess
    const next = await eventLogPage(db, MERCHANT.id, seen.lastExamined, 25, 500);
    expect(seen.items.map((item) => item.event.id)).toEqual([entry('900').event.id, entry('1000').event.id]);
    expect(next.items.map((item) => item.event.id)).toEqual([entry('700').event.id]);
    expect(items.get(entry('700').position)?.late_at).toBe(`${eventPosition('1000', 0)}~${entry('700').position}`);
  });

  it('writes nothing for an event read again below the committed top: it is already there', async () => {
    // Prepare
    fakeLog();
    await appendToEventLog(db, MERCHANT.id, [entry('800'), entry('900')]);
    ddbMock.resetHistory();

    // Act
    await appendToEventLog(db, MERCHANT.id, [entry('800')]);

    // Assess: only the marker's conditional put, refused
    expect(ddbMock.commandCalls(PutCommand).map((call) => call.args[0].input.ConditionExpression)).toEqual(['attribute_not_exists(pk)']);
    expect(ddbMock).not.toHaveReceivedCommand(BatchWriteCommand);
  });
});

describe('an uncommitted batch', () => {
  it('stays hidden while a larger retry has written part of it: only a commit at or above a batch top shows it', async () => {
    // Prepare: the first try of events 1-6 writes 1, 2, 4 and 5 (not 3, nor its top 6); the retry,
    // grown to 1-8, writes only 6, which is no commit (its top is 8)
    const events = Array.from({ length: 8 }, (_, index) => entry(String(101 + index)));
    const tries = [
      (written: Record<string, unknown>[]) => written.filter((item) => item.sk !== events[2]?.position),
      (written: Record<string, unknown>[]) => written.filter((item) => item.sk === events[5]?.position),
    ];
    fakeLog(async (apply, written) => {
      const keep = tries.shift();
      if (keep === undefined) return;
      apply(keep(written));
      throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
    });
    await expect(appendToEventLog(db, MERCHANT.id, events.slice(0, 6))).rejects.toThrow('throttled');
    await expect(appendToEventLog(db, MERCHANT.id, events)).rejects.toThrow('throttled');

    // Act
    const during = await eventLogPage(db, MERCHANT.id, LOG_START, 3, 500);
    await appendToEventLog(db, MERCHANT.id, events);
    const after = await eventLogPage(db, MERCHANT.id, LOG_START, 25, 500);

    // Assess
    expect(during.items).toEqual([]);
    expect(after.items.map((item) => item.event.id)).toEqual(events.map((event) => event.event.id));
  });
});

describe('the event log under failing writes', () => {
  it.each(Array.from({ length: 40 }, (_, seed) => seed))(
    'gives a reader polling between every write each event once, in order, never one behind its cursor (seed %i)',
    async (seed) => {
      // Prepare: a feed writing 80 events in batches; nearly a third of the writes fail, most of
      // those after applying part of the batch; a batch retried grows by what arrived meanwhile; one failing
      // four times has its first record parked, replayed at the end
      const random = seededRandom(seed);
      let failing = true;
      const seen: string[] = [];
      let cursor = LOG_START;
      const poll = async () => {
        for (;;) {
          const page = await eventLogPage(db, MERCHANT.id, cursor, 1 + Math.floor(random() * 4), 20);
          seen.push(...page.items.map((item) => item.event.id));
          cursor = page.lastExamined;
          if (!page.more) return;
        }
      };
      fakeLog(async (apply, written) => {
        await poll();
        if (!failing || random() > 0.3) return;
        if (random() < 0.7) apply(written.filter(() => random() < 0.6));
        await poll();
        throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
      });
      const entries = Array.from({ length: 80 }, (_, index) => entry(String(1000 + Math.floor(index / 2)), index % 2));
      const parked: LogEntry[] = [];

      // Act
      let next = 0;
      while (next < entries.length) {
        let size = 1 + Math.floor(random() * 6);
        for (let tries = 1; ; tries++) {
          const batch = entries.slice(next, next + size);
          try {
            await appendToEventLog(db, MERCHANT.id, batch);
            next += batch.length;
            break;
          } catch {
            if (tries === 4) {
              parked.push(...batch.slice(0, 1));
              next += 1;
              break;
            }
            size += Math.floor(random() * 3);
          }
        }
      }
      failing = false;
      await appendToEventLog(db, MERCHANT.id, parked);
      await poll();

      // Assess: a fresh read from the start finds what the poller saw, and every event once
      const fresh: string[] = [];
      let from = LOG_START;
      for (let more = true; more; ) {
        const page = await eventLogPage(db, MERCHANT.id, from, 100, 500);
        fresh.push(...page.items.map((item) => item.event.id));
        from = page.lastExamined;
        more = page.more;
      }
      expect(seen).toEqual(fresh);
      expect([...fresh].sort()).toEqual(entries.map((item) => item.event.id).sort());
      const inPlace = fresh.filter((id) => !parked.some((item) => item.event.id === id));
      expect(inPlace).toEqual(entries.filter((item) => !parked.includes(item)).map((item) => item.event.id));
    },
  );
});

describe('reading the event log', () => {
  it('examines a bounded number of items per page whatever the filter, and says where it stopped', async () => {
    // Prepare: a filter that matches nothing, over a log longer than a page may examine
    fakeLog();
    const logged = Array.from({ length: 700 }, (_, index) => entry(String(1000 + index)));
    for (let start = 0; start < logged.length; start += 100) await appendToEventLog(db, MERCHANT.id, logged.slice(start, start + 100));
    ddbMock.resetHistory();

    // Act
    const page = await eventLogPage(db, MERCHANT.id, LOG_START, 25, 500, { types: ['invite.sent'] });

    // Assess
    const queries = ddbMock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(queries.reduce((sum, input) => sum + (input.Limit ?? 0), 0)).toBeLessThanOrEqual(500);
    expect(queries.every((input) => input.ConsistentRead === true)).toBe(true);
    expect(page).toEqual(expect.objectContaining({ items: [], more: true, lastExamined: logged[499]?.position }));
  });
});

describe('polling the event log (GET /api/v2/events)', () => {
  const NOW = 1_790_000_000_000;
  const nowSeconds = NOW / 1000;
  const logged = (first: number, count: number, loggedAt: number) =>
    Array.from({ length: count }, (_, index) => ({ ...entry(String(first + index)), loggedAt }));
  const query = (extra: Partial<EventsQuery> = {}): EventsQuery => ({ limit: 25, ...extra }) as EventsQuery;

  it('starts a first read with the last 30 days, so paging on from it never meets an expired cursor', async () => {
    // Prepare: 30 events logged 30.5 days ago (kept 31 days), then 30 an hour ago.
    fakeLog();
    const old = logged(100, 30, nowSeconds - 30.5 * 86_400);
    const recent = logged(200, 30, nowSeconds - 3600);
    await appendToEventLog(db, MERCHANT.id, old, nowSeconds);
    await appendToEventLog(db, MERCHANT.id, recent, nowSeconds);

    // Act
    const first = await listEvents(MERCHANT.id, query(), NOW);
    const second = await listEvents(MERCHANT.id, query({ after: first.next_cursor }), NOW + 1000);

    // Assess
    expect(first.events.map((event) => event.id)).toEqual(recent.slice(0, 25).map(({ event }) => event.id));
    expect(second.events.map((event) => event.id)).toEqual(recent.slice(25).map(({ event }) => event.id));
  });

  it('passes over more old events than a page examines before it returns any, on every page until it reaches the last 30 days', async () => {
    // Prepare: 600 events logged 30.5 days ago (more than the 500 a page examines), then 3 an hour ago.
    fakeLog();
    for (let start = 0; start < 600; start += 100)
      await appendToEventLog(db, MERCHANT.id, logged(1000 + start, 100, nowSeconds - 30.5 * 86_400), nowSeconds);
    const recent = logged(5000, 3, nowSeconds - 3600);
    await appendToEventLog(db, MERCHANT.id, recent, nowSeconds);

    // Act
    const seen: string[] = [];
    let page = await listEvents(MERCHANT.id, query(), NOW);
    seen.push(...page.events.map((event) => event.id));
    for (let reads = 0; page.has_more && reads < 5; reads++) {
      page = await listEvents(MERCHANT.id, query({ after: page.next_cursor }), NOW);
      seen.push(...page.events.map((event) => event.id));
    }

    // Assess
    expect(seen).toEqual(recent.map(({ event }) => event.id));
  });

  it('takes back its own cursor past late events replayed in descending order, each a step longer', async () => {
    // Prepare: 900 committed; records 705 down to 690 replayed one by one (lower each time), a reader polling after each.
    fakeLog();
    await appendToEventLog(db, MERCHANT.id, [entry('900')], nowSeconds);
    let cursor = (await listEvents(MERCHANT.id, query(), NOW)).next_cursor;
    const seen: string[] = [];

    // Act
    for (let sequence = 705; sequence >= 690; sequence--) {
      await appendToEventLog(db, MERCHANT.id, [entry(String(sequence))], nowSeconds);
      const page = await listEvents(MERCHANT.id, z.parse(eventsQuery, { after: cursor }), NOW);
      seen.push(...page.events.map((event) => event.id));
      cursor = page.next_cursor;
    }

    // Assess
    expect(cursor.length).toBeGreaterThan(400);
    expect(seen).toEqual(Array.from({ length: 16 }, (_, index) => entry(String(705 - index)).event.id));
  });

  it('takes a cursor while what follows it is still kept (31 days, less an hour), and refuses an older one', async () => {
    // Prepare
    fakeLog();
    const cursorAt = (daysAgo: number) =>
      encodeCursor('live', MERCHANT.id, { position: LOG_START, since: Math.floor(nowSeconds - daysAgo * 86_400) });

    // Act
    const kept = await listEvents(MERCHANT.id, query({ after: cursorAt(30.5) }), NOW);
    const expired = listEvents(MERCHANT.id, query({ after: cursorAt(31) }), NOW);

    // Assess
    expect(kept.has_more).toBe(false);
    await expect(expired).rejects.toMatchObject({ statusCode: 422, errors: { after: [expect.stringContaining('expired')] } });
  });
});

describe('the event log cursor', () => {
  it('reads back for its merchant and stage, and for no other', () => {
    // Prepare
    const cursor = encodeCursor('live', MERCHANT.id, { position: eventPosition('123', 2), since: 1_772_000_000 });

    // Act, Assess
    expect(decodeCursor('live', MERCHANT.id, cursor)).toEqual({ position: eventPosition('123', 2), since: 1_772_000_000 });
    expect(decodeCursor('live', OTHER_MERCHANT_ID, cursor)).toBeUndefined();
    expect(decodeCursor('sandbox', MERCHANT.id, cursor)).toBeUndefined();
    expect(decodeCursor('live', MERCHANT.id, `${cursor}x`)).toBeUndefined();
    expect(decodeCursor('live', MERCHANT.id, 'garbage')).toBeUndefined();
  });
});
