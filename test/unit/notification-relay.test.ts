import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { GetCommand, QueryCommand, type QueryCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { logger } from '#shared/logger';
import { relayOwedNotification, relayPendingNotifications } from '#shared/mail/relay';
import { MAX_ATTEMPTS, MAX_PERMANENT_ATTEMPTS, mailFailure, notificationOutcomeUpdate, retryDelaySeconds } from '#shared/mail/settle';
import { ddbMock, resetAwsMocks } from './support/aws';

const sesMock = mockClient(SESClient);
const MERCHANT = '0d3f5c1e-6a2b-4c8d-9e0f-1a2b3c4d5e6f';
const NOW = '2026-03-01T12:00:00.000Z';
/** The merchant's own partitions of owed work on gsi2. */
const NOTIFY = `M#${MERCHANT}#NOTIFY`;
const PARKED = `M#${MERCHANT}#PARKED`;
const RECOUNT = `M#${MERCHANT}#RECOUNT`;

const inviteKey = (n: number) => ({ pk: `M#${MERCHANT}`, sk: `INVITE#a05d4c6e-7081-4293-8e1f-4a5b6c7d8e${String(n).padStart(2, '0')}` });
const owedInvite = (n: number, extra: Record<string, unknown> = {}) => ({
  ...inviteKey(n),
  gsi1pk: `M#${MERCHANT}#invites#all`,
  gsi1sk: String(n).padStart(12, '0'),
  type: 'invite',
  uuid: inviteKey(n).sk.slice('INVITE#'.length),
  seq: n,
  email: `invitee-${n}@example.com`,
  sender_email: 'owner@acme.example',
  content: null,
  link_used_at: null,
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:00:00.000Z',
  notification_pending_at: '2026-03-01T10:00:00.000Z',
  gsi2pk: NOTIFY,
  gsi2sk: '2026-03-01T10:00:00.000Z',
  ...extra,
});

type EntryKey = { pk: string; sk: string };

/**
 * The sparse index, by partition: each holds `pages` of entries, answered in turn (a page after
 * another names the last entry of the one before as its ExclusiveStartKey); other partitions are empty.
 */
const partitions = new Map<string, EntryKey[][]>();
const indexPages = (partition: string, ...pages: EntryKey[][]) => {
  partitions.set(partition, pages);
};
const answerIndex = async (input: QueryCommandInput) => {
  const partition = String(input.ExpressionAttributeValues?.[':pk']);
  const pages = partitions.get(partition) ?? [];
  const after = input.ExclusiveStartKey?.sk;
  const index = after === undefined ? 0 : pages.findIndex((page) => page[page.length - 1]?.sk === after) + 1;
  const page = pages[index] ?? [];
  const last = page[page.length - 1];
  return {
    Items: page,
    ...(index < pages.length - 1 && last ? { LastEvaluatedKey: { ...last, gsi2pk: partition, gsi2sk: NOW } } : {}),
  };
};
/** The due time each stored item's entry had: what the follow-up scheduled for it carries. */
const dues = new Map<string, string>();
const stored = (...items: Record<string, unknown>[]) => {
  for (const item of items) {
    ddbMock.on(GetCommand, { Key: { pk: item.pk, sk: item.sk } }).resolves({ Item: item });
    if (typeof item.gsi2sk === 'string') dues.set(String(item.sk), item.gsi2sk);
  }
};
/** The follow-up the change feed scheduled for invite `n`'s entry as stored. */
const followUpOf = (n: number) => relayOwedNotification(inviteKey(n), dues.get(inviteKey(n).sk) ?? NOW);
const updateFor = (n: number) =>
  ddbMock.commandCalls(UpdateCommand).find((call) => call.args[0].input.Key?.sk === inviteKey(n).sk)?.args[0].input;
const indexQueries = () => ddbMock.commandCalls(QueryCommand).map((call) => call.args[0].input);
const sentTo = () => sesMock.commandCalls(SendEmailCommand).map((call) => call.args[0].input.Destination?.ToAddresses?.[0]);
const uriError = () => new URIError('URI malformed');
/** An ISO time `seconds` from NOW. */
const inSeconds = (seconds: number) => new Date(Date.parse(NOW) + seconds * 1000).toISOString();

const SENT_UPDATE =
  'SET notified_at = :now REMOVE notification_pending_at, notification_failed_at, notification_error, notification_attempts, notification_parked_at, gsi2pk, gsi2sk';
const NOTHING = { sent: 0, retry: 0, parked: 0, dropped: 0, skipped: 0, early: 0 };

beforeEach(() => {
  resetAwsMocks();
  sesMock.reset();
  partitions.clear();
  dues.clear();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(NOW));
  // An item not stubbed reads as missing, the way DynamoDB answers.
  ddbMock.on(GetCommand).resolves({});
  ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: 'MERCHANT' } }).resolves({ Item: { name: 'Acme', currency: 'EUR' } });
  ddbMock.on(QueryCommand, { IndexName: 'gsi2' }).callsFake(answerIndex);
  ddbMock.on(UpdateCommand).resolves({});
  sesMock.on(SendEmailCommand).resolves({ MessageId: 'm-1' });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("relayPendingNotifications (one merchant's owed e-mails at once: the operator's resend)", () => {
  it("queries only the merchant's own NOTIFY partition, for entries due before the minimum age, sends the owed e-mail and settles it", async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)]);
    stored(owedInvite(1));

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT, olderThanSeconds: 60 });

    // Assess
    expect(result).toEqual({ ...NOTHING, sent: 1 });
    expect(indexQueries()).toEqual([
      expect.objectContaining({
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk <= :cutoff',
        ExpressionAttributeValues: { ':pk': NOTIFY, ':cutoff': '2026-03-01T11:59:00.000Z' },
      }),
    ]);
    expect(sentTo()).toEqual(['invitee-1@example.com']);
    expect(updateFor(1)).toMatchObject({
      UpdateExpression: SENT_UPDATE,
      ConditionExpression: 'attribute_exists(pk) AND attribute_exists(notification_pending_at)',
    });
  });

  it("never reads another merchant's owed e-mails (no partition shared by merchants)", async () => {
    // Prepare
    const other = 'ffffffff-6a2b-4c8d-9e0f-1a2b3c4d5e6f';
    const theirs = { ...owedInvite(1), pk: `M#${other}`, gsi2pk: `M#${other}#NOTIFY` };
    indexPages(`M#${other}#NOTIFY`, [{ pk: theirs.pk, sk: theirs.sk }]);
    stored(theirs);
    indexPages(NOTIFY, [inviteKey(2)]);
    stored(owedInvite(2));

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT, includeParked: true });

    // Assess
    expect(result).toEqual({ ...NOTHING, sent: 1 });
    expect(sentTo()).toEqual(['invitee-2@example.com']);
    expect(indexQueries().map((query) => query.ExpressionAttributeValues?.[':pk'])).toEqual([NOTIFY, PARKED]);
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: { pk: theirs.pk, sk: theirs.sk } });
  });

  it("with includeParked, sends the merchant's parked e-mails too, whatever their age, and clears their parking", async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)]);
    indexPages(PARKED, [inviteKey(2)]);
    stored(
      owedInvite(1),
      owedInvite(2, { notification_attempts: MAX_PERMANENT_ATTEMPTS, notification_parked_at: '2026-03-01T11:59:59.000Z', gsi2pk: PARKED }),
    );

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT, olderThanSeconds: 60, includeParked: true });

    // Assess
    expect(result).toEqual({ ...NOTHING, sent: 2 });
    expect(indexQueries().map((query) => query.ExpressionAttributeValues)).toEqual([
      { ':pk': NOTIFY, ':cutoff': '2026-03-01T11:59:00.000Z' },
      { ':pk': PARKED, ':cutoff': NOW },
    ]);
    expect(sentTo()).toEqual(['invitee-1@example.com', 'invitee-2@example.com']);
    expect(updateFor(2)?.UpdateExpression).toBe(SENT_UPDATE);
  });

  it('leaves parked e-mails alone unless asked', async () => {
    // Prepare
    indexPages(PARKED, [inviteKey(2)]);
    stored(owedInvite(2, { notification_parked_at: NOW, gsi2pk: PARKED }));

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toEqual(NOTHING);
    expect(indexQueries().map((query) => query.ExpressionAttributeValues?.[':pk'])).toEqual([NOTIFY]);
    expect(sentTo()).toEqual([]);
  });

  it('isolates failures: an e-mail that fails does not stop or delay the ones after it', async () => {
    // Prepare: the first owed e-mail fails on every try (a lone surrogate)
    indexPages(NOTIFY, [inviteKey(1), inviteKey(2), inviteKey(3)]);
    stored(owedInvite(1, { content: 'bad' }), owedInvite(2), owedInvite(3));
    sesMock.on(SendEmailCommand, { Destination: { ToAddresses: ['invitee-1@example.com'] } }).rejects(uriError());

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toEqual({ ...NOTHING, sent: 2, retry: 1 });
    expect(sentTo()).toEqual(['invitee-1@example.com', 'invitee-2@example.com', 'invitee-3@example.com']);
    expect(updateFor(1)).toMatchObject({
      UpdateExpression:
        'SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts, gsi2pk = :workPartition, gsi2sk = :workSince REMOVE notification_parked_at',
      ExpressionAttributeValues: {
        ':now': NOW,
        ':error': 'URIError: URI malformed',
        ':attempts': 1,
        ':workPartition': NOTIFY,
        ':workSince': NOW,
      },
    });
  });

  it('isolates exceptions too: an item that cannot be read is skipped, the others are sent', async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1), inviteKey(2)]);
    stored(owedInvite(2));
    ddbMock.on(GetCommand, { Key: inviteKey(1) }).rejects(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toEqual({ ...NOTHING, sent: 1, skipped: 1 });
    expect(sentTo()).toEqual(['invitee-2@example.com']);
    expect(updateFor(1)).toBeUndefined();
  });

  it('counts a failure to build the message as a failed try of that e-mail (a merchant that is gone)', async () => {
    // Prepare
    const gone = 'ffffffff-6a2b-4c8d-9e0f-1a2b3c4d5e6f';
    const orphan = { ...owedInvite(1), pk: `M#${gone}`, gsi2pk: `M#${gone}#NOTIFY` };
    indexPages(`M#${gone}#NOTIFY`, [{ pk: orphan.pk, sk: orphan.sk }]);
    stored(orphan);
    ddbMock.on(GetCommand, { Key: { pk: `M#${gone}`, sk: 'MERCHANT' } }).resolves({});

    // Act
    const result = await relayPendingNotifications({ merchantId: gone });

    // Assess
    expect(result).toEqual({ ...NOTHING, retry: 1 });
    expect(sentTo()).toEqual([]);
    const update = ddbMock.commandCalls(UpdateCommand).find((call) => call.args[0].input.Key?.pk === orphan.pk)?.args[0].input;
    expect(update?.ExpressionAttributeValues).toMatchObject({
      ':error': 'MerchantNotFound: the merchant of this item does not exist',
      ':attempts': 1,
      ':workPartition': `M#${gone}#NOTIFY`,
    });
  });

  it(`parks an e-mail whose failure cannot change on its ${MAX_PERMANENT_ATTEMPTS}rd try: reason kept, entry moved to the PARKED partition`, async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)]);
    stored(owedInvite(1, { notification_attempts: MAX_PERMANENT_ATTEMPTS - 1 }));
    sesMock.on(SendEmailCommand).rejects(uriError());

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toEqual({ ...NOTHING, parked: 1 });
    expect(updateFor(1)).toMatchObject({
      UpdateExpression:
        'SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts, notification_parked_at = :now, gsi2pk = :workPartition, gsi2sk = :workSince',
      ExpressionAttributeValues: {
        ':now': NOW,
        ':error': 'URIError: URI malformed',
        ':attempts': MAX_PERMANENT_ATTEMPTS,
        ':workPartition': PARKED,
        ':workSince': NOW,
      },
    });
  });

  it('backs off a transient failure (it never sits in front of newer e-mails) and parks it only after MAX_ATTEMPTS', async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1), inviteKey(2)]);
    stored(owedInvite(1, { notification_attempts: 3 }), owedInvite(2, { notification_attempts: MAX_ATTEMPTS - 1 }));
    sesMock
      .on(SendEmailCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } }));

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toMatchObject({ retry: 1, parked: 1 });
    expect(updateFor(1)?.ExpressionAttributeValues).toMatchObject({
      ':attempts': 4,
      ':error': 'Throttling (HTTP 400)',
      ':workPartition': NOTIFY,
      ':workSince': '2026-03-01T12:08:00.000Z',
    });
    expect(updateFor(2)?.UpdateExpression).toContain('notification_parked_at = :now, gsi2pk = :workPartition');
    expect(updateFor(2)?.ExpressionAttributeValues).toMatchObject({ ':workPartition': PARKED });
  });

  it('walks the partition page by page instead of re-reading its head', async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)], [inviteKey(2)]);
    stored(owedInvite(1), owedInvite(2));
    ddbMock.on(UpdateCommand, { Key: inviteKey(1) }).rejects(Object.assign(new Error('timeout'), { name: 'TimeoutError' })); // stays due

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess: the first was sent but its outcome not recorded (still owed: skipped, tried again)
    expect(result).toMatchObject({ sent: 1, skipped: 1 });
    const queries = indexQueries();
    expect(queries).toHaveLength(2);
    expect(queries.map((query) => query.ExpressionAttributeValues?.[':pk'])).toEqual([NOTIFY, NOTIFY]);
    expect(queries[1]?.ExclusiveStartKey).toMatchObject(inviteKey(1));
  });

  it('stops at the deadline and at maxItems; the rest stays owed', async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1), inviteKey(2), inviteKey(3)]);
    stored(owedInvite(1), owedInvite(2), owedInvite(3));

    // Act
    const late = await relayPendingNotifications({ merchantId: MERCHANT, deadline: Date.now() - 1 });
    const bounded = await relayPendingNotifications({ merchantId: MERCHANT, maxItems: 2 });

    // Assess
    expect(late.sent).toBe(0);
    expect(bounded.sent).toBe(2);
    expect(sentTo()).toEqual(['invitee-1@example.com', 'invitee-2@example.com']);
    expect(updateFor(3)).toBeUndefined();
  });

  it('drops an entry whose item no longer owes anything, without sending', async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)]);
    stored({ ...owedInvite(1), notification_pending_at: undefined });

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toEqual({ ...NOTHING, dropped: 1 });
    expect(sesMock.commandCalls(SendEmailCommand)).toHaveLength(0);
    expect(updateFor(1)).toMatchObject({
      UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
      ConditionExpression: 'attribute_not_exists(notification_pending_at)',
    });
  });
});

describe('relayOwedNotification (the follow-up of one owed e-mail, when it is due)', () => {
  it('sends the e-mail when it is due and settles it, reading only its item (consistently) and its merchant', async () => {
    // Prepare
    stored(owedInvite(1, { notification_attempts: 2, gsi2sk: inSeconds(-30) }));

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('sent');
    expect(sentTo()).toEqual(['invitee-1@example.com']);
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: inviteKey(1), ConsistentRead: true });
    expect(ddbMock).not.toHaveReceivedCommand(QueryCommand);
    expect(updateFor(1)).toMatchObject({
      UpdateExpression: SENT_UPDATE,
      ConditionExpression: 'attribute_exists(pk) AND attribute_exists(notification_pending_at)',
    });
  });

  it('sends it when it arrives a few seconds before its due time (clocks and delays are not exact)', async () => {
    // Prepare
    stored(owedInvite(1, { notification_attempts: 2, gsi2sk: inSeconds(4) }));

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('sent');
    expect(sentTo()).toEqual(['invitee-1@example.com']);
  });

  it("answers 'early' and sends nothing when the e-mail is due later (rescheduled since: that write scheduled its own follow-up)", async () => {
    // Prepare
    stored(owedInvite(1, { notification_attempts: 1, gsi2sk: inSeconds(60) }));

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('early');
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it("answers 'early' and sends nothing when its entry moved since it was scheduled, even to a moment later: the follow-up of the new time sends it", async () => {
    // Prepare: its first try failed and moved the entry 2 s on; this follow-up was for the first time
    stored(owedInvite(1, { notification_attempts: 1, gsi2sk: inSeconds(2) }));

    // Act
    const outcome = await relayOwedNotification(inviteKey(1), inSeconds(-60));

    // Assess
    expect(outcome).toBe('early');
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it("answers 'early' and sends nothing when the e-mail is parked, however long ago it was due", async () => {
    // Prepare
    stored(
      owedInvite(1, {
        notification_attempts: MAX_ATTEMPTS,
        notification_parked_at: inSeconds(-600),
        gsi2pk: PARKED,
        gsi2sk: inSeconds(-600),
      }),
    );

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('early');
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it("answers 'dropped' and sends nothing when nothing is owed any more (sent meanwhile), removing any entry left", async () => {
    // Prepare
    stored({ ...owedInvite(1), notification_pending_at: undefined, notified_at: inSeconds(-10) });

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('dropped');
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(updateFor(1)).toMatchObject({
      UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
      ConditionExpression: 'attribute_not_exists(notification_pending_at)',
    });
  });

  it("answers 'dropped' when the item is gone", async () => {
    // Prepare: GetItem finds nothing (the default answer).

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('dropped');
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it("answers 'skipped' when the item cannot be read, so that its follow-up is tried again", async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: inviteKey(1) }).rejects(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('skipped');
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });

  it("records a failed try with its next due time in the merchant's NOTIFY partition (the change feed schedules that follow-up)", async () => {
    // Prepare
    stored(owedInvite(1, { notification_attempts: 2 }));
    sesMock.on(SendEmailCommand).rejects(Object.assign(new Error('x'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }));

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('retry');
    expect(updateFor(1)?.ExpressionAttributeValues).toMatchObject({
      ':attempts': 3,
      ':workPartition': NOTIFY,
      ':workSince': inSeconds(retryDelaySeconds(3)),
    });
  });
});

describe('an owed e-mail of an unfinished request, and the list counts', () => {
  const recountMarks = () =>
    ddbMock
      .commandCalls(UpdateCommand)
      .map((call) => call.args[0].input)
      .filter((input) => input.ExpressionAttributeValues?.[':workPartition'] === RECOUNT)
      .map((input) => input.Key);
  const inviteBlock = (block: number) => ({ pk: `M#${MERCHANT}#COUNTS`, sk: `invites#all#${String(block).padStart(8, '0')}` });

  it.each([
    ['was never tried (the request stopped after its commit)', undefined],
    ['failed once in the request', 1],
  ])('marks the list block of an invite whose e-mail %s for recount, then sends it', async (_label, attempts) => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)]);
    stored(owedInvite(1, { seq: 513, ...(attempts === undefined ? {} : { notification_attempts: attempts }) }));

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toMatchObject({ sent: 1 });
    expect(recountMarks()).toEqual([inviteBlock(2)]);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: inviteBlock(2),
      UpdateExpression:
        'ADD n :zero SET #type = :type, marked_at = :now, gsi2pk = :workPartition, gsi2sk = if_not_exists(gsi2sk, :workSince)',
    });
  });

  it('does the same in the follow-up of the e-mail: marks the block for recount, then sends it', async () => {
    // Prepare
    stored(owedInvite(1, { seq: 513 }));

    // Act
    const outcome = await followUpOf(1);

    // Assess
    expect(outcome).toBe('sent');
    expect(recountMarks()).toEqual([inviteBlock(2)]);
    const mark = ddbMock.commandCalls(UpdateCommand, { Key: inviteBlock(2) })[0]?.args[0].input;
    const settle = ddbMock.commandCalls(UpdateCommand, { Key: inviteKey(1) })[0]?.args[0].input;
    expect(mark).toBeDefined();
    expect(settle?.UpdateExpression).toBe(SENT_UPDATE);
  });

  it("puts an unfinished invite's address in the e-mail projection again (an idempotent SET), then sends it", async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)]);
    const owed = owedInvite(1, { seq: 513 });
    stored(owed);

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toMatchObject({ sent: 1 });
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: `M#${MERCHANT}#INVITE_EMAILS`, sk: '00000002' },
      UpdateExpression: 'SET #s0 = :s0',
      ExpressionAttributeNames: { '#s0': 's513' },
      ExpressionAttributeValues: { ':s0': `${owed.uuid}:${owed.email}` },
    });
  });

  it('marks nothing for an e-mail a follow-up already tried (its request had finished long before)', async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)]);
    stored(owedInvite(1, { notification_attempts: 2 }));

    // Act
    const result = await relayPendingNotifications({ merchantId: MERCHANT });

    // Assess
    expect(result).toMatchObject({ sent: 1 });
    expect(recountMarks()).toEqual([]);
  });

  it('sends nothing while the mark (or the projection write) fails, logs it and tries again, then sends once it works', async () => {
    // Prepare
    indexPages(NOTIFY, [inviteKey(1)]);
    stored(owedInvite(1));
    ddbMock.on(UpdateCommand, { Key: inviteBlock(0) }).rejectsOnce(new Error('mark failed'));
    const warned = vi.spyOn(logger, 'warn');

    // Act
    const first = await relayPendingNotifications({ merchantId: MERCHANT });
    const sentFirst = sentTo();
    const second = await followUpOf(1);

    // Assess
    expect(first).toMatchObject({ sent: 0, skipped: 1 });
    expect(sentFirst).toEqual([]);
    expect(warned).toHaveBeenCalledWith('Could not finish the follow-ups of an unfinished request; the e-mail waits for them', {
      sk: inviteKey(1).sk,
      error_name: 'Error',
    });
    expect(second).toBe('sent');
    expect(sentTo()).toEqual(['invitee-1@example.com']);
  });
});

describe('the retry policy', () => {
  it('doubles the wait from one minute up to an hour', () => {
    expect([1, 2, 3, 6, 7, 20].map(retryDelaySeconds)).toEqual([60, 120, 240, 1920, 3600, 3600]);
  });

  it('classifies failures without quoting SES messages (they can contain addresses)', () => {
    expect(
      mailFailure(
        Object.assign(new Error('Email address is not verified: bob@x.example'), {
          name: 'MessageRejected',
          $metadata: { httpStatusCode: 400 },
        }),
      ),
    ).toEqual({
      permanent: true,
      reason: 'MessageRejected (HTTP 400)',
    });
    expect(mailFailure(uriError())).toEqual({ permanent: true, reason: 'URIError: URI malformed' });
    expect(mailFailure(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toEqual({ permanent: false, reason: 'TimeoutError' });
    expect(mailFailure(Object.assign(new Error('x'), { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }))).toEqual({
      permanent: false,
      reason: 'ServiceUnavailable (HTTP 503)',
    });
  });

  it('sends a parked e-mail again only when asked (the resend clears the parking)', () => {
    const { settled, update } = notificationOutcomeUpdate(inviteKey(1), { sent: true }, NOW, MAX_ATTEMPTS);
    expect(settled).toBe('sent');
    expect(update.UpdateExpression).toContain(
      'REMOVE notification_pending_at, notification_failed_at, notification_error, notification_attempts, notification_parked_at',
    );
  });
});
