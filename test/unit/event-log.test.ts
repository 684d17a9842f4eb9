import { BatchWriteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { reactionsTo } from '#shared/changes/feed';
import { appendToEventLog, eventLogPage, eventPosition, type LogEntry } from '#shared/db/entities/event-log';
import { decodeCursor, encodeCursor } from '#shared/domain/event-cursor';
import { ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT, MERCHANT_PK, OTHER_MERCHANT_ID, storedPendingRequest } from './support/fixtures';

const db = { ddb: ddbMock as never, table: 'unit-table' };
const LOG_PK = `${MERCHANT_PK}#EVENTS`;
const HEAD_QUERY = { KeyConditionExpression: 'pk = :pk AND sk = :head' };

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

describe('appending to the event log', () => {
  it('puts every event in one BatchWriteItem call per 25, then moves the head to the highest of them', async () => {
    // Act
    await appendToEventLog(db, MERCHANT.id, [entry('500'), entry('501'), entry('501', 1)]);

    // Assess
    const calls = ddbMock.commandCalls(BatchWriteCommand);
    expect(calls).toHaveLength(1);
    const puts = (calls[0]?.args[0].input.RequestItems?.['unit-table'] ?? []).map((request) => request.PutRequest?.Item);
    expect(puts.map((item) => [item?.pk, item?.sk])).toEqual([
      [LOG_PK, eventPosition('500', 0)],
      [LOG_PK, eventPosition('501', 0)],
      [LOG_PK, eventPosition('501', 1)],
    ]);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: LOG_PK, sk: 'HEAD' },
      ExpressionAttributeValues: expect.objectContaining({ ':position': eventPosition('501', 1) }),
    });
  });

  it('leaves the head where it was when a write failed, so no reader sees past the gap', async () => {
    // Prepare
    ddbMock.on(BatchWriteCommand).rejects(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));

    // Act
    const appended = appendToEventLog(db, MERCHANT.id, [entry('500'), entry('501'), entry('502')]);

    // Assess
    await expect(appended).rejects.toThrow('throttled');
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('logs an event that arrives below the head just above it, once, with a marker at its own position', async () => {
    // Prepare: the head is at 900; the event of record 700 (parked, replayed) was never logged
    ddbMock.on(QueryCommand, HEAD_QUERY).resolves({ Items: [{ pk: LOG_PK, sk: 'HEAD', position: eventPosition('900', 0), logged_at: 1 }] });
    const late = entry('700');

    // Act
    await appendToEventLog(db, MERCHANT.id, [late]);

    // Assess
    const lateAt = `${eventPosition('900', 0)}~${late.position}`;
    const puts = ddbMock.commandCalls(PutCommand).map((call) => call.args[0].input);
    expect(puts.map((input) => [input.Item?.sk, input.Item?.late_at, input.ConditionExpression])).toEqual([
      [late.position, lateAt, 'attribute_not_exists(pk)'],
      [lateAt, undefined, undefined],
    ]);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      ExpressionAttributeValues: expect.objectContaining({ ':position': lateAt }),
    });
  });

  it('writes nothing new for an event read again below the head: it is already there', async () => {
    // Prepare
    ddbMock.on(QueryCommand, HEAD_QUERY).resolves({ Items: [{ pk: LOG_PK, sk: 'HEAD', position: eventPosition('900', 0), logged_at: 1 }] });
    ddbMock.on(PutCommand).rejects(Object.assign(new Error('exists'), { name: 'ConditionalCheckFailedException', Item: { sk: 'x' } }));

    // Act
    await appendToEventLog(db, MERCHANT.id, [entry('800')]);

    // Assess
    expect(ddbMock).toHaveReceivedCommandTimes(PutCommand, 1);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });
});

describe('reading the event log', () => {
  it('examines a bounded number of items per page whatever the filter, and says where it stopped', async () => {
    // Prepare: a filter that matches nothing, over a log longer than a page may examine
    ddbMock.on(QueryCommand).callsFake((input) => ({
      Items: [],
      ScannedCount: input.Limit,
      LastEvaluatedKey: { pk: LOG_PK, sk: eventPosition(String(input.Limit), 0) },
    }));

    // Act
    const page = await eventLogPage(db, MERCHANT.id, '0', eventPosition('99999', 0), 25, 500, { types: ['invite.sent'] });

    // Assess
    const queries = ddbMock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(queries.reduce((sum, input) => sum + (input.Limit ?? 0), 0)).toBeLessThanOrEqual(500);
    expect(queries.every((input) => input.ConsistentRead === true)).toBe(true);
    expect(page).toEqual(expect.objectContaining({ items: [], more: true }));
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
