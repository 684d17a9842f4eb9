import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as relayHandler } from '#functions/notifications/relay';
import { logger } from '#shared/logger';
import { relayPendingNotifications } from '#shared/mail/relay';
import { MAX_ATTEMPTS, MAX_PERMANENT_ATTEMPTS, mailFailure, notificationOutcomeUpdate, retryDelaySeconds } from '#shared/mail/settle';
import { workerContext } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';

const sesMock = mockClient(SESClient);
const MERCHANT = '0d3f5c1e-6a2b-4c8d-9e0f-1a2b3c4d5e6f';
const NOW = '2026-03-01T12:00:00.000Z';

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
  ...extra,
});

/** The index answers `pages` in turn (each a list of entries, the last without LastEvaluatedKey), then nothing. */
const indexPages = (...pages: ReturnType<typeof inviteKey>[][]) => {
  let query = ddbMock.on(QueryCommand, { IndexName: 'gsi2' });
  pages.forEach((page, index) => {
    const last = page[page.length - 1];
    query = query.resolvesOnce({
      Items: page,
      ...(index < pages.length - 1 && last ? { LastEvaluatedKey: { ...last, gsi2pk: 'NOTIFY', gsi2sk: NOW } } : {}),
    });
  });
  query.resolves({ Items: [] });
};
const stored = (...items: ReturnType<typeof owedInvite>[]) => {
  for (const item of items) ddbMock.on(GetCommand, { Key: { pk: item.pk, sk: item.sk } }).resolves({ Item: item });
};
const updateFor = (n: number) =>
  ddbMock.commandCalls(UpdateCommand).find((call) => call.args[0].input.Key?.sk === inviteKey(n).sk)?.args[0].input;
const sentTo = () => sesMock.commandCalls(SendEmailCommand).map((call) => call.args[0].input.Destination?.ToAddresses?.[0]);
const uriError = () => new URIError('URI malformed');

beforeEach(() => {
  resetAwsMocks();
  sesMock.reset();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(NOW));
  ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: 'MERCHANT' } }).resolves({ Item: { name: 'Acme', currency: 'EUR' } });
  ddbMock.on(UpdateCommand).resolves({});
  sesMock.on(SendEmailCommand).resolves({ MessageId: 'm-1' });
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('relayPendingNotifications', () => {
  it('queries only NOTIFY entries due before the minimum age, sends the owed e-mail and settles it', async () => {
    // Prepare
    indexPages([inviteKey(1)]);
    stored(owedInvite(1));

    // Act
    const result = await relayPendingNotifications({ olderThanSeconds: 60 });

    // Assess
    expect(result).toEqual({ sent: 1, retry: 0, parked: 0, dropped: 0, skipped: 0 });
    const query = ddbMock.commandCalls(QueryCommand)[0]?.args[0].input;
    expect(query?.ExpressionAttributeValues).toEqual({ ':pk': 'NOTIFY', ':cutoff': '2026-03-01T11:59:00.000Z' });
    expect(sentTo()).toEqual(['invitee-1@example.com']);
    expect(updateFor(1)).toMatchObject({
      UpdateExpression:
        'SET notified_at = :now REMOVE notification_pending_at, notification_failed_at, notification_error, notification_attempts, notification_parked_at, gsi2pk, gsi2sk',
      ConditionExpression: 'attribute_exists(pk) AND attribute_exists(notification_pending_at)',
    });
  });

  it('isolates failures: an e-mail that fails does not stop or delay the ones after it', async () => {
    // Prepare: the first owed e-mail fails on every try (a lone surrogate)
    indexPages([inviteKey(1), inviteKey(2), inviteKey(3)]);
    stored(owedInvite(1, { content: 'bad' }), owedInvite(2), owedInvite(3));
    sesMock.on(SendEmailCommand, { Destination: { ToAddresses: ['invitee-1@example.com'] } }).rejects(uriError());

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toEqual({ sent: 2, retry: 1, parked: 0, dropped: 0, skipped: 0 });
    expect(sentTo()).toEqual(['invitee-1@example.com', 'invitee-2@example.com', 'invitee-3@example.com']);
    expect(updateFor(1)).toMatchObject({
      UpdateExpression:
        'SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts, gsi2pk = :outboxKind, gsi2sk = :outboxSince REMOVE notification_parked_at',
      ExpressionAttributeValues: {
        ':now': NOW,
        ':error': 'URIError: URI malformed',
        ':attempts': 1,
        ':outboxKind': 'NOTIFY',
        ':outboxSince': NOW,
      },
    });
  });

  it('isolates exceptions too: an item that cannot be read is skipped, the others are sent', async () => {
    // Prepare
    indexPages([inviteKey(1), inviteKey(2)]);
    stored(owedInvite(2));
    ddbMock.on(GetCommand, { Key: inviteKey(1) }).rejects(Object.assign(new Error('timeout'), { name: 'TimeoutError' }));

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toEqual({ sent: 1, retry: 0, parked: 0, dropped: 0, skipped: 1 });
    expect(sentTo()).toEqual(['invitee-2@example.com']);
    expect(updateFor(1)).toBeUndefined();
  });

  it('counts a failure to build the message as a failed try of that e-mail (a merchant that is gone)', async () => {
    // Prepare
    const other = 'ffffffff-6a2b-4c8d-9e0f-1a2b3c4d5e6f';
    const orphan = { ...owedInvite(1), pk: `M#${other}` };
    indexPages([{ pk: orphan.pk, sk: orphan.sk }, inviteKey(2)]);
    ddbMock.on(GetCommand, { Key: { pk: orphan.pk, sk: orphan.sk } }).resolves({ Item: orphan });
    ddbMock.on(GetCommand, { Key: { pk: `M#${other}`, sk: 'MERCHANT' } }).resolves({});
    stored(owedInvite(2));

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toMatchObject({ sent: 1, retry: 1 });
    const update = ddbMock.commandCalls(UpdateCommand).find((call) => call.args[0].input.Key?.pk === orphan.pk)?.args[0].input;
    expect(update?.ExpressionAttributeValues).toMatchObject({
      ':error': 'MerchantNotFound: the merchant of this item does not exist',
      ':attempts': 1,
    });
  });

  it(`parks an e-mail whose failure cannot change on its ${MAX_PERMANENT_ATTEMPTS}rd try: reason kept, entry off the index`, async () => {
    // Prepare
    indexPages([inviteKey(1)]);
    stored(owedInvite(1, { notification_attempts: MAX_PERMANENT_ATTEMPTS - 1 }));
    sesMock.on(SendEmailCommand).rejects(uriError());

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toEqual({ sent: 0, retry: 0, parked: 1, dropped: 0, skipped: 0 });
    expect(updateFor(1)).toMatchObject({
      UpdateExpression:
        'SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts, notification_parked_at = :now, gsi2pk = :outboxKind, gsi2sk = :outboxSince',
      ExpressionAttributeValues: {
        ':now': NOW,
        ':error': 'URIError: URI malformed',
        ':attempts': MAX_PERMANENT_ATTEMPTS,
        ':outboxKind': 'PARKED',
      },
    });
  });

  it('backs off a transient failure (it never sits in front of newer e-mails) and parks it only after MAX_ATTEMPTS', async () => {
    // Prepare
    indexPages([inviteKey(1), inviteKey(2)]);
    stored(owedInvite(1, { notification_attempts: 3 }), owedInvite(2, { notification_attempts: MAX_ATTEMPTS - 1 }));
    sesMock
      .on(SendEmailCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'Throttling', $metadata: { httpStatusCode: 400 } }));

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toMatchObject({ retry: 1, parked: 1 });
    expect(updateFor(1)?.ExpressionAttributeValues).toMatchObject({
      ':attempts': 4,
      ':error': 'Throttling (HTTP 400)',
      ':outboxSince': '2026-03-01T12:08:00.000Z',
    });
    expect(updateFor(2)?.UpdateExpression).toContain('notification_parked_at = :now, gsi2pk = :outboxKind');
    expect(updateFor(2)?.ExpressionAttributeValues).toMatchObject({ ':outboxKind': 'PARKED' });
  });

  it('walks the index page by page instead of re-reading its head', async () => {
    // Prepare
    indexPages([inviteKey(1)], [inviteKey(2)]);
    stored(owedInvite(1), owedInvite(2));
    ddbMock.on(UpdateCommand, { Key: inviteKey(1) }).rejects(Object.assign(new Error('timeout'), { name: 'TimeoutError' })); // stays due

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result.sent).toBe(2);
    const queries = ddbMock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(queries).toHaveLength(2);
    expect(queries[1]?.ExclusiveStartKey).toMatchObject(inviteKey(1));
  });

  it('stops at the deadline and at maxItems; the rest is due on the next run', async () => {
    // Prepare
    indexPages([inviteKey(1), inviteKey(2), inviteKey(3)]);
    stored(owedInvite(1), owedInvite(2), owedInvite(3));

    // Act
    const late = await relayPendingNotifications({ deadline: Date.now() - 1 });
    const bounded = await relayPendingNotifications({ maxItems: 2 });

    // Assess
    expect(late.sent).toBe(0);
    expect(bounded.sent).toBe(2);
    expect(sentTo()).toEqual(['invitee-1@example.com', 'invitee-2@example.com']);
  });

  it('drops an entry whose item no longer owes anything, without sending', async () => {
    // Prepare
    indexPages([inviteKey(1)]);
    stored({ ...owedInvite(1), notification_pending_at: undefined as unknown as string });

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toMatchObject({ sent: 0, dropped: 1 });
    expect(sesMock.commandCalls(SendEmailCommand)).toHaveLength(0);
    expect(updateFor(1)).toMatchObject({
      UpdateExpression: 'REMOVE gsi2pk, gsi2sk',
      ConditionExpression: 'attribute_not_exists(notification_pending_at)',
    });
  });

  it('runs as the scheduled function with a deadline inside its remaining time', async () => {
    // Prepare
    indexPages([inviteKey(1)]);
    stored(owedInvite(1));

    // Act
    const result = await relayHandler({}, workerContext('notification-relay'));

    // Assess
    expect(result).toMatchObject({ sent: 1 });
  });
});

describe('relayPendingNotifications and the list counts', () => {
  const recountMarks = () =>
    ddbMock
      .commandCalls(UpdateCommand)
      .map((call) => call.args[0].input)
      .filter((input) => input.ExpressionAttributeValues?.[':outboxKind'] === 'RECOUNT')
      .map((input) => input.Key);
  const inviteBlock = (block: number) => ({ pk: `M#${MERCHANT}#COUNTS`, sk: `invites#all#${String(block).padStart(8, '0')}` });

  it.each([
    ['was never tried (the request stopped after its commit)', undefined],
    ['failed once in the request', 1],
  ])('marks the list block of an invite whose e-mail %s for recount, then sends it', async (_label, attempts) => {
    // Prepare
    indexPages([inviteKey(1)]);
    stored(owedInvite(1, { seq: 513, ...(attempts === undefined ? {} : { notification_attempts: attempts }) }));

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toMatchObject({ sent: 1 });
    expect(recountMarks()).toEqual([inviteBlock(2)]);
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: inviteBlock(2),
      UpdateExpression:
        'ADD n :zero SET #type = :type, marked_at = :now, gsi2pk = :outboxKind, gsi2sk = if_not_exists(gsi2sk, :outboxSince)',
    });
  });

  it("puts an unfinished invite's address in the e-mail projection again (an idempotent SET), then sends it", async () => {
    // Prepare
    indexPages([inviteKey(1)]);
    const owed = owedInvite(1, { seq: 513 });
    stored(owed);

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toMatchObject({ sent: 1 });
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: `M#${MERCHANT}#INVITE_EMAILS`, sk: '00000002' },
      UpdateExpression: 'SET #s0 = :s0',
      ExpressionAttributeNames: { '#s0': 's513' },
      ExpressionAttributeValues: { ':s0': `${owed.uuid}:${owed.email}` },
    });
  });

  it('marks nothing for an e-mail the relay itself already tried (its request had finished long before)', async () => {
    // Prepare
    indexPages([inviteKey(1)]);
    stored(owedInvite(1, { notification_attempts: 2 }));

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toMatchObject({ sent: 1 });
    expect(recountMarks()).toEqual([]);
  });

  it('still sends the e-mail when the mark fails, and logs it', async () => {
    // Prepare
    indexPages([inviteKey(1)]);
    stored(owedInvite(1));
    ddbMock.on(UpdateCommand, { Key: inviteBlock(0) }).rejects(new Error('mark failed'));
    const warned = vi.spyOn(logger, 'warn');

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toMatchObject({ sent: 1 });
    expect(sentTo()).toEqual(['invitee-1@example.com']);
    expect(warned).toHaveBeenCalledWith('Could not finish the follow-ups of an unfinished request', {
      sk: inviteKey(1).sk,
      error_name: 'Error',
    });
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
