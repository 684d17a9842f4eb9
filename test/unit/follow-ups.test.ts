import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '#functions/follow-ups/process';
import { logger } from '#shared/logger';
import { workerContext } from './support/api';
import { batchMessagesSentTo, conditionFailed, ddbMock, indexItems, resetAwsMocks, sqsBatchAnswer, sqsMock } from './support/aws';
import { MERCHANT, MERCHANT_KEY, MERCHANT_PK } from './support/fixtures';

const sesMock = mockClient(SESClient);

const FOLLOW_UPS_QUEUE = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-follow-ups';
const NOW = '2026-03-01T12:00:00.000Z';
/** An ISO time `seconds` from NOW. */
const inSeconds = (seconds: number) => new Date(Date.parse(NOW) + seconds * 1000).toISOString();

/** A list block count marked for recount: the orders list's block 2 (sequence numbers 512-767). */
const BLOCK_KEY = { pk: `${MERCHANT_PK}#COUNTS`, sk: 'orders#all#00000002' };
const INVITE_KEY = { pk: MERCHANT_PK, sk: 'INVITE#a05d4c6e-7081-4293-8e1f-4a5b6c7d8e01' };
/** An invite that still owes its e-mail, due `due` (its entry in the merchant's NOTIFY partition). */
const owedInvite = (due: string, extra: Record<string, unknown> = {}) => ({
  ...INVITE_KEY,
  gsi1pk: `${MERCHANT_PK}#invites#all`,
  gsi1sk: '000000000001',
  gsi2pk: `${MERCHANT_PK}#NOTIFY`,
  gsi2sk: due,
  type: 'invite',
  uuid: INVITE_KEY.sk.slice('INVITE#'.length),
  seq: 1,
  email: 'erin@example.com',
  sender_email: 'owner@acme.example',
  content: null,
  link_used_at: null,
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:00:00.000Z',
  notification_pending_at: '2026-03-01T10:00:00.000Z',
  // Tried before by a follow-up: nothing of its request is left to finish.
  notification_attempts: 2,
  ...extra,
});

/** An SQS record of the follow-ups queue, as the event source mapping delivers it. */
const record = (messageId: string, body: unknown): SQSRecord => ({
  messageId,
  receiptHandle: messageId,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '1772366400000',
    SenderId: 'AIDAUNIT',
    ApproximateFirstReceiveTimestamp: '1772366400000',
  },
  messageAttributes: {},
  md5OfBody: 'x',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:unit-follow-ups',
  awsRegion: 'us-east-1',
});
const run = (...records: SQSRecord[]) => handler({ Records: records } satisfies SQSEvent, workerContext('follow-ups'));

/** The follow-ups sent (again) to the follow-ups queue: body and delay. */
const requeued = () => batchMessagesSentTo(FOLLOW_UPS_QUEUE);

beforeEach(() => {
  resetAwsMocks();
  sesMock.reset();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(NOW));
  // Anything not stubbed more specifically reads as missing, the way DynamoDB answers.
  ddbMock.on(GetCommand).resolves({});
  ddbMock
    .on(GetCommand, { Key: MERCHANT_KEY })
    .resolves({ Item: { ...MERCHANT_KEY, type: 'merchant', name: MERCHANT.name, currency: 'EUR' } });
  ddbMock.on(UpdateCommand).resolves({});
  sesMock.on(SendEmailCommand).resolves({ MessageId: 'e-1' });
  sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer());
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('the follow-ups function', () => {
  it('recounts the block a recount follow-up names from its list index, removes the mark, and acknowledges it', async () => {
    // Prepare: the count says 7, the list index holds 9 orders in the block.
    ddbMock.on(GetCommand, { Key: BLOCK_KEY }).resolves({ Item: { n: 7, marked_at: inSeconds(-60) } });
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolves(indexItems(9));

    // Act
    const result = await run(record('recount-1', { kind: 'recount', key: BLOCK_KEY, due: inSeconds(-60) }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi1',
      ProjectionExpression: '#updated',
      ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#orders#all`, ':first': '000000000512', ':last': '000000000767' },
    });
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: BLOCK_KEY,
      UpdateExpression: 'SET n = :after, v = if_not_exists(v, :zero) + :one, #type = :type REMOVE marked_at, gsi2pk, gsi2sk',
      ConditionExpression: 'n = :before AND marked_at = :markedAt',
      ExpressionAttributeValues: expect.objectContaining({ ':after': 9, ':before': 7 }),
    });
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('notes the settled numbers of a settle follow-up that name no order as holes of its block, and acknowledges it', async () => {
    // Prepare: numbers 600-602 settled; the list index names 601 only.
    ddbMock.on(GetCommand, { Key: BLOCK_KEY }).resolves({ Item: {} });
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolves({ Items: [{ gsi1sk: '000000000601' }] });
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await run(record('settle-1', { kind: 'settle', key: BLOCK_KEY, due: inSeconds(-60), first: 600, last: 602 }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: BLOCK_KEY,
      UpdateExpression: 'ADD holes :holes, v :one SET #type = :type, changed_at = :now',
      ExpressionAttributeValues: expect.objectContaining({ ':holes': new Set([600, 602]) }),
    });
  });

  it('reports a recount follow-up whose block kept changing under every attempt in batchItemFailures (SQS redelivers it)', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: BLOCK_KEY }).resolves({ Item: { n: 7, marked_at: inSeconds(-60) } });
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolves(indexItems(9));
    ddbMock.on(UpdateCommand, { Key: BLOCK_KEY }).rejects(conditionFailed());

    // Act
    const result = await run(record('recount-1', { kind: 'recount', key: BLOCK_KEY, due: inSeconds(-60) }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'recount-1' }] });
  });

  it('marks a block changed a moment ago again instead of recounting it, and acknowledges its follow-up', async () => {
    // Prepare: an ADD landed a second ago; the list index may not show its item yet.
    ddbMock.on(GetCommand, { Key: BLOCK_KEY }).resolves({ Item: { n: 8, marked_at: inSeconds(-60), changed_at: inSeconds(-1) } });
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolves(indexItems(7));

    // Act
    const result = await run(record('recount-1', { kind: 'recount', key: BLOCK_KEY, due: inSeconds(-60) }));

    // Assess: the count is left alone, the mark renewed (the change feed sends the next follow-up).
    expect(result).toEqual({ batchItemFailures: [] });
    const writes = ddbMock.commandCalls(UpdateCommand).map((call) => String(call.args[0].input.UpdateExpression));
    expect(writes).toHaveLength(1);
    expect(writes[0]).toContain('marked_at = :now');
    expect(writes[0]).not.toContain('SET n =');
  });

  it('sends the owed e-mail of a notify follow-up that is due, settles it, and acknowledges it', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: owedInvite(inSeconds(-1)) });

    // Act
    const result = await run(record('notify-1', { kind: 'notify', key: INVITE_KEY, due: inSeconds(-1) }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(sesMock).toHaveReceivedCommandExactlyOnceWith(SendEmailCommand, {
      Destination: { ToAddresses: ['erin@example.com'] },
      Source: 'affiliates@unit.test',
    });
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: INVITE_KEY,
      UpdateExpression:
        'SET notified_at = :now REMOVE notification_pending_at, notification_failed_at, notification_error, notification_attempts, notification_parked_at, gsi2pk, gsi2sk',
    });
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('reports a notify follow-up whose failed send could not be recorded either in batchItemFailures: the item did not change, so no new follow-up comes', async () => {
    // Prepare: SES refuses, then the write that would reschedule the e-mail is throttled
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: owedInvite(inSeconds(-1)) });
    sesMock
      .on(SendEmailCommand)
      .rejects(Object.assign(new Error('unavailable'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }));
    ddbMock.on(UpdateCommand).rejects(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }));

    // Act
    const result = await run(record('notify-unsettled', { kind: 'notify', key: INVITE_KEY, due: inSeconds(-1) }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'notify-unsettled' }] });
  });

  it('sends a notify follow-up that arrived before its due time (SQS delays 15 minutes at most) to the follow-ups queue again, delayed until due', async () => {
    // Prepare: due in 10 minutes (a retry backed off for longer than SQS could delay it).
    const due = inSeconds(600);
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: owedInvite(due) });

    // Act
    const result = await run(record('notify-1', { kind: 'notify', key: INVITE_KEY, due }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(requeued()).toEqual([{ body: { kind: 'notify', key: INVITE_KEY, due }, delay: 600 }]);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('delays a follow-up due later than SQS can delay it by the most SQS allows', async () => {
    // Prepare
    const due = inSeconds(3_600);
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: owedInvite(due) });

    // Act
    const result = await run(record('notify-1', { kind: 'notify', key: INVITE_KEY, due }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(requeued()).toEqual([{ body: { kind: 'notify', key: INVITE_KEY, due }, delay: 900 }]);
  });

  it('reports an early notify follow-up that SQS refused to take again in batchItemFailures, so it is not lost', async () => {
    // Prepare
    const due = inSeconds(600);
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: owedInvite(due) });
    sqsMock.on(SendMessageBatchCommand).callsFake(sqsBatchAnswer([]));

    // Act
    const result = await run(record('notify-1', { kind: 'notify', key: INVITE_KEY, due }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'notify-1' }] });
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('acknowledges, without sending or scheduling anything, a follow-up whose e-mail was rescheduled later since (that write scheduled its own)', async () => {
    // Prepare: this follow-up was due a minute ago; a failed try since moved the e-mail 4 minutes ahead.
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: owedInvite(inSeconds(240), { notification_attempts: 3 }) });

    // Act
    const result = await run(record('notify-1', { kind: 'notify', key: INVITE_KEY, due: inSeconds(-60) }));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('acknowledges a follow-up whose e-mail is parked or no longer owed, sending nothing', async () => {
    // Prepare
    const parkedKey = { pk: MERCHANT_PK, sk: 'INVITE#a05d4c6e-7081-4293-8e1f-4a5b6c7d8e02' };
    ddbMock.on(GetCommand, { Key: parkedKey }).resolves({
      Item: { ...owedInvite(inSeconds(-60)), ...parkedKey, gsi2pk: `${MERCHANT_PK}#PARKED`, notification_parked_at: inSeconds(-60) },
    });
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: { ...owedInvite(inSeconds(-60)), notification_pending_at: undefined } });

    // Act
    const result = await run(
      record('parked', { kind: 'notify', key: parkedKey, due: inSeconds(-60) }),
      record('settled', { kind: 'notify', key: INVITE_KEY, due: inSeconds(-60) }),
    );

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it.each([
    ['not JSON', 'not json'],
    ['another kind of message', { type: 'order.created', merchant_id: MERCHANT.id, order_uuid: 'o-1' }],
    ['a follow-up without a key', { kind: 'notify', due: NOW }],
    ['a follow-up of an unknown kind', { kind: 'webhook', key: INVITE_KEY, due: NOW }],
    ['a settle follow-up without its numbers', { kind: 'settle', key: BLOCK_KEY, due: NOW, first: 600 }],
  ])('drops and acknowledges a message that is not a follow-up (%s), and logs it', async (_label, body) => {
    // Prepare
    const logged = vi.spyOn(logger, 'error');

    // Act
    const result = await run(record('junk', body));

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    expect(logged).toHaveBeenCalledWith('Not a follow-up message: dropped', { message_id: 'junk' });
    expect(ddbMock).not.toHaveReceivedAnyCommand();
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(sqsMock).not.toHaveReceivedAnyCommand();
  });

  it('reports only the follow-up that cannot be done in batchItemFailures, and does the others of the batch', async () => {
    // Prepare: the first e-mail's item cannot be read; the second is due.
    const unreadable = { pk: MERCHANT_PK, sk: 'INVITE#a05d4c6e-7081-4293-8e1f-4a5b6c7d8e03' };
    ddbMock.on(GetCommand, { Key: unreadable }).rejects(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: owedInvite(inSeconds(-1)) });

    // Act
    const result = await run(
      record('unreadable', { kind: 'notify', key: unreadable, due: inSeconds(-1) }),
      record('due', { kind: 'notify', key: INVITE_KEY, due: inSeconds(-1) }),
    );

    // Assess
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: 'unreadable' }] });
    expect(sesMock).toHaveReceivedCommandTimes(SendEmailCommand, 1);
  });
});
