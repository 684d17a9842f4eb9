import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { affiliateRequestRecord } from '#shared/db/entities/affiliate-request';
import { acceptAffiliateRequest, declineAffiliateRequest } from '#shared/domain/affiliate-request-decisions';
import { createInvite } from '#shared/domain/invite-affiliate';
import { ApiError } from '#shared/errors';
import { logger } from '#shared/logger';
import { conditionFailed, ddbMock, transactionCanceled } from './support/aws';

/**
 * "Durable state first, then e-mail": the transition commits before SES is called, an SES failure
 * never undoes it (the API still answers with the committed state), and the failure is recorded
 * on the item for the resend command.
 */
const sesMock = mockClient(SESClient);

const MERCHANT = { id: 'm-1', name: 'Acme', currency: 'EUR', defaultTier: 'bronze' };
const PK = `M#${MERCHANT.id}`;
const COUNTS_PK = `${PK}#COUNTS`;
const pending = affiliateRequestRecord(
  MERCHANT.id,
  { seq: 5, affiliate: { slug: 'bob', name: 'Bob', email: 'bob@x.example' } },
  '2026-03-01T00:00:00.000Z',
);
const REQUEST_KEY = { pk: PK, sk: `AREQ#${pending.uuid}` };
const AFFILIATE_KEY = { pk: PK, sk: 'AFFILIATE#bob' };
const sesDown = Object.assign(new Error('Email address is not verified: bob@x.example'), { name: 'MessageRejected' });

/** How an owed e-mail is settled (shared/mail/settle.ts): sent, or failed and due again. */
const SENT_UPDATE =
  'SET notified_at = :now REMOVE notification_pending_at, notification_failed_at, notification_error, notification_attempts, notification_parked_at, gsi2pk, gsi2sk';
const RETRY_UPDATE =
  'SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts, gsi2pk = :workPartition, gsi2sk = :workSince REMOVE notification_parked_at';

const updates = () => ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input);
/** The UpdateItems that settle the owed e-mail of an item (sent or failed). */
const settlements = (key: { pk: string; sk: string }) =>
  updates().filter((input) => JSON.stringify(input.Key) === JSON.stringify(key) && input.ReturnValues === undefined);
/** The list block-count changes made: `<list>#<bucket>#<block>` -> delta. */
const countChanges = () =>
  Object.fromEntries(
    updates()
      .filter((input) => input.Key?.pk === COUNTS_PK)
      .map((input) => [input.Key?.sk, input.ExpressionAttributeValues?.[':delta']]),
  );
const transactItems = (call = 0) => ddbMock.commandCalls(TransactWriteCommand)[call]?.args[0].input.TransactItems ?? [];

beforeEach(() => {
  ddbMock.reset();
  sesMock.reset();
  ddbMock.on(UpdateCommand).resolves({});
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('decline', () => {
  beforeEach(() => {
    ddbMock.on(UpdateCommand, { Key: REQUEST_KEY, ReturnValues: 'ALL_NEW' }).resolves({ Attributes: { ...pending, status: 'declined' } });
  });

  it('commits the decline, then e-mails the affiliate and clears the owed e-mail', async () => {
    // Prepare
    sesMock.on(SendEmailCommand).resolves({ MessageId: 'x' });

    // Act
    const declined = await declineAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(declined.status).toBe('declined');
    expect(updates()[0]).toMatchObject({
      Key: REQUEST_KEY,
      ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
      // The owed e-mail is an entry in the merchant's own NOTIFY partition of gsi2.
      ExpressionAttributeValues: {
        ':decision': 'declined',
        ':listPk': `${PK}#affiliate_requests#declined`,
        ':workPartition': `${PK}#NOTIFY`,
      },
    });
    expect(updates()[0]?.UpdateExpression).toContain('notification_pending_at = :owedAt, gsi2pk = :workPartition, gsi2sk = :workSince');
    expect(sesMock).toHaveReceivedCommandWith(SendEmailCommand, {
      Destination: { ToAddresses: ['bob@x.example'] },
      Source: 'affiliates@unit.test',
    });
    expect(settlements(REQUEST_KEY)).toEqual([expect.objectContaining({ UpdateExpression: SENT_UPDATE })]);
  });

  it('moves the request from the pending list to the declined list once committed', async () => {
    // Prepare
    sesMock.on(SendEmailCommand).resolves({ MessageId: 'x' });

    // Act
    await declineAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(countChanges()).toEqual({ 'affiliate_requests#pending#00000000': -1, 'affiliate_requests#declined#00000000': 1 });
  });

  it('still answers with the committed decline when SES fails, and records the failure (no undo)', async () => {
    // Prepare
    sesMock.on(SendEmailCommand).rejects(sesDown);
    const logged = vi.spyOn(logger, 'error');

    // Act
    const declined = await declineAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(declined.status).toBe('declined');
    expect(logged).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ uuid: pending.uuid, error_name: 'MessageRejected' }));
    expect(JSON.stringify(logged.mock.calls)).not.toContain('@'); // SES messages quote addresses: never logged
    expect(updates().filter((input) => input.Key?.pk === PK)).toHaveLength(2);
    expect(settlements(REQUEST_KEY)).toEqual([expect.objectContaining({ UpdateExpression: RETRY_UPDATE })]);
  });

  it('answers 422 and changes no count when the request was decided already', async () => {
    // Prepare
    ddbMock
      .on(UpdateCommand, { Key: REQUEST_KEY, ReturnValues: 'ALL_NEW' })
      .rejects(conditionFailed(marshall({ ...pending, status: 'accepted' })));

    // Act
    const outcome = declineAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    await expect(outcome).rejects.toMatchObject({
      statusCode: 422,
      errors: { message: ['The affiliate request has already been accepted.'] },
    });
    expect(countChanges()).toEqual({});
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('answers 404 and changes nothing when the request does not exist', async () => {
    // Prepare
    ddbMock.on(UpdateCommand, { Key: REQUEST_KEY, ReturnValues: 'ALL_NEW' }).rejects(conditionFailed());

    // Act
    const outcome = declineAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    await expect(outcome).rejects.toMatchObject({ statusCode: 404 });
    expect(updates()).toHaveLength(1);
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });
});

describe('accept', () => {
  beforeEach(() => {
    ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({ Item: pending });
    ddbMock.on(GetCommand, { Key: AFFILIATE_KEY }).resolves({});
    ddbMock.on(UpdateCommand, { Key: { pk: PK, sk: 'COUNTER#affiliates' } }).resolves({ Attributes: { seq: 12 } });
    ddbMock.on(TransactWriteCommand).resolves({});
    sesMock.on(SendEmailCommand).resolves({ MessageId: 'x' });
  });

  it('moves the request and creates the active affiliate in one transaction, then e-mails', async () => {
    // Act
    const accepted = await acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(accepted.status).toBe('accepted');
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: REQUEST_KEY, ConsistentRead: true });
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: AFFILIATE_KEY, ConsistentRead: true });
    const items = transactItems();
    expect(items).toHaveLength(2);
    expect(items[0]?.Update).toMatchObject({
      Key: REQUEST_KEY,
      ConditionExpression: 'attribute_exists(pk) AND #status = :pending',
      ExpressionAttributeValues: { ':decision': 'accepted', ':listPk': `${PK}#affiliate_requests#accepted` },
    });
    expect(items[1]?.Put).toMatchObject({
      ConditionExpression: 'attribute_not_exists(pk)',
      Item: { ...AFFILIATE_KEY, status: 'active', accepted_at: accepted.decided_at },
    });
    expect(sesMock).toHaveReceivedCommandTimes(SendEmailCommand, 1);
    expect(settlements(REQUEST_KEY)).toHaveLength(1);
  });

  it("gives a new affiliate the merchant's default tier and the next affiliate sequence number, listed in `all` and under its tier", async () => {
    // Act
    await acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(transactItems()[1]?.Put?.Item).toMatchObject({
      slug: 'bob',
      name: 'Bob',
      email: 'bob@x.example',
      seq: 12,
      tier_slug: 'bronze',
      gsi1pk: `${PK}#affiliates#all`,
      gsi1sk: '000000000012',
      gsi3pk: `${PK}#affiliates#tier%3Abronze`,
      gsi3sk: '000000000012',
    });
    // The sequence counter is an atomic ADD outside the transaction.
    expect(JSON.stringify(transactItems())).not.toContain('COUNTER#');
  });

  it('counts the request as accepted and the new affiliate in `all` and its tier, once committed', async () => {
    // Act
    await acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(countChanges()).toEqual({
      'affiliate_requests#pending#00000000': -1,
      'affiliate_requests#accepted#00000000': 1,
      'affiliates#all#00000000': 1,
      'affiliates#tier%3Abronze#00000000': 1,
    });
  });

  it('reactivates an inactive affiliate, keeping its tier, sequence number and created_at; conditional on the item as read', async () => {
    // Prepare
    const existing = {
      ...AFFILIATE_KEY,
      type: 'affiliate',
      slug: 'bob',
      seq: 3,
      name: 'Bob Old',
      email: 'old@x.example',
      status: 'inactive',
      tier_slug: 'gold',
      accepted_at: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-02-01T00:00:00.000Z',
    };
    ddbMock.on(GetCommand, { Key: AFFILIATE_KEY }).resolves({ Item: existing });

    // Act
    const accepted = await acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(transactItems()[1]?.Put).toMatchObject({
      ConditionExpression: '#status <> :active AND updated_at = :seen',
      ExpressionAttributeValues: { ':active': 'active', ':seen': '2026-02-01T00:00:00.000Z' },
      Item: {
        name: 'Bob',
        email: 'bob@x.example',
        status: 'active',
        seq: 3,
        tier_slug: 'gold',
        created_at: '2026-01-01T00:00:00.000Z',
        accepted_at: accepted.decided_at,
      },
    });
    expect(ddbMock).not.toHaveReceivedCommandWith(UpdateCommand, { Key: { pk: PK, sk: 'COUNTER#affiliates' } });
    expect(countChanges()).toEqual({ 'affiliate_requests#pending#00000000': -1, 'affiliate_requests#accepted#00000000': 1 });
  });

  it('condition-checks an affiliate that is already active and leaves it as it is', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: AFFILIATE_KEY }).resolves({
      Item: {
        ...AFFILIATE_KEY,
        slug: 'bob',
        seq: 3,
        name: 'Bob',
        email: 'bob@x.example',
        status: 'active',
        tier_slug: null,
        accepted_at: null,
        created_at: 'x',
        updated_at: 'x',
      },
    });

    // Act
    await acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(transactItems()[1]).toEqual({
      ConditionCheck: {
        TableName: 'unit-table',
        Key: AFFILIATE_KEY,
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':active': 'active' },
      },
    });
    expect(countChanges()).toEqual({ 'affiliate_requests#pending#00000000': -1, 'affiliate_requests#accepted#00000000': 1 });
  });

  it('keeps the accept when SES fails: one transaction, no compensation, failure recorded', async () => {
    // Prepare
    sesMock.on(SendEmailCommand).rejects(sesDown);

    // Act
    const accepted = await acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(accepted.status).toBe('accepted');
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    expect(updates().filter((input) => input.Key?.pk === PK && input.Key.sk !== 'COUNTER#affiliates')).toEqual([
      expect.objectContaining({ Key: REQUEST_KEY, UpdateExpression: RETRY_UPDATE }),
    ]);
  });

  it('answers 422 and sends nothing when the request is no longer pending', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({ Item: { ...pending, status: 'declined' } });

    // Act
    const outcome = acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    await expect(outcome).rejects.toMatchObject({
      statusCode: 422,
      errors: { message: ['The affiliate request has already been declined.'] },
    });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('answers 422 when the request part is refused because a decline committed first (read again, by name)', async () => {
    // Prepare
    ddbMock
      .on(GetCommand, { Key: REQUEST_KEY })
      .resolvesOnce({ Item: pending })
      .resolves({ Item: { ...pending, status: 'declined' } });
    ddbMock.on(TransactWriteCommand).rejects(transactionCanceled('ConditionalCheckFailed', 'None'));

    // Act
    const outcome = acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    await expect(outcome).rejects.toMatchObject({
      statusCode: 422,
      errors: { message: ['The affiliate request has already been declined.'] },
    });
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    expect(countChanges()).toEqual({});
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('answers 404 and writes nothing when the request does not exist', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({});

    // Act
    const outcome = acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    await expect(outcome).rejects.toMatchObject({ statusCode: 404 });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
  });
});

describe('invite', () => {
  const input = { email: 'new@x.example', sender_email: 'owner@acme.example', content: null };
  const USER_KEY = { pk: PK, sk: 'USER#owner@acme.example' };
  const GUARD_KEY = { pk: PK, sk: 'INVITE_EMAIL#new@x.example' };

  beforeEach(() => {
    ddbMock
      .on(GetCommand, { Key: USER_KEY })
      .resolves({ Item: { ...USER_KEY, type: 'user', email: input.sender_email, name: 'Olivia Owner' } });
    ddbMock.on(GetCommand, { Key: GUARD_KEY }).resolves({});
    ddbMock.on(UpdateCommand, { Key: { pk: PK, sk: 'COUNTER#invites' } }).resolves({ Attributes: { seq: 7 } });
    ddbMock.on(TransactWriteCommand).resolves({});
    sesMock.on(SendEmailCommand).resolves({ MessageId: 'x' });
  });

  it('puts the invite (owing its e-mail) and its e-mail guard in one transaction, then counts it, projects its e-mail and e-mails', async () => {
    // Act
    const invite = await createInvite(MERCHANT, input);

    // Assess
    const items = transactItems();
    expect(items).toHaveLength(2);
    expect(items[0]?.Put).toMatchObject({
      ConditionExpression: 'attribute_not_exists(pk)',
      Item: {
        pk: PK,
        sk: `INVITE#${invite.uuid}`,
        gsi1pk: `${PK}#invites#all`,
        gsi1sk: '000000000007',
        gsi2pk: `${PK}#NOTIFY`,
        gsi2sk: invite.notification_pending_at,
        seq: 7,
        email: 'new@x.example',
      },
    });
    expect(items[1]?.Put).toEqual({
      TableName: 'unit-table',
      Item: { ...GUARD_KEY, type: 'invite_email', invite_uuid: invite.uuid },
      ConditionExpression: 'attribute_not_exists(pk)',
      // A refused guard names its holder: a retry of this very invite recognises its own.
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(countChanges()).toEqual({ 'invites#all#00000000': 1 });
    expect(ddbMock).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: `${PK}#INVITE_EMAILS`, sk: '00000000' },
      UpdateExpression: 'SET #s0 = :s0',
      ExpressionAttributeNames: { '#s0': 's7' },
      ExpressionAttributeValues: { ':s0': `${invite.uuid}:new@x.example` },
    });
    expect(sesMock).toHaveReceivedCommandTimes(SendEmailCommand, 1);
  });

  it('leaves the e-mail owed for its follow-up when a write after the commit failed (the follow-up redoes those writes first)', async () => {
    // Prepare
    ddbMock.on(UpdateCommand, { Key: { pk: `${PK}#INVITE_EMAILS`, sk: '00000000' } }).rejects(new Error('projection write failed'));

    // Act
    const invite = await createInvite(MERCHANT, input);

    // Assess
    expect(invite.email).toBe('new@x.example');
    expect(sesMock).toHaveReceivedCommandTimes(SendEmailCommand, 0);
    expect(transactItems()[0]?.Put).toMatchObject({ Item: { gsi2pk: `${PK}#NOTIFY`, notification_pending_at: invite.created_at } });
    expect(settlements({ pk: PK, sk: `INVITE#${invite.uuid}` })).toEqual([]);
  });

  it('answers 422 naming every failing field, and takes no sequence number, when the address is invited and the sender unknown', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: GUARD_KEY }).resolves({ Item: { invite_uuid: '0b1c2d3e-4f50-4617-8283-94a5b6c7d8e9' } });
    ddbMock.on(GetCommand, { Key: USER_KEY }).resolves({});

    // Act
    const outcome = createInvite(MERCHANT, input);

    // Assess
    await expect(outcome).rejects.toMatchObject({
      statusCode: 422,
      errors: { email: ['The email has already been taken.'], sender_email: ['The selected sender email is invalid.'] },
    });
    expect(ddbMock).not.toHaveReceivedCommand(UpdateCommand);
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('answers 422 on email, and sends nothing, when the guard loses the race', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(transactionCanceled('None', 'ConditionalCheckFailed'));

    // Act
    const outcome = createInvite(MERCHANT, input);

    // Assess
    await expect(outcome).rejects.toBeInstanceOf(ApiError);
    await expect(outcome).rejects.toMatchObject({ statusCode: 422, errors: { email: ['The email has already been taken.'] } });
    expect(countChanges()).toEqual({});
    expect(ddbMock).not.toHaveReceivedCommandWith(UpdateCommand, { Key: { pk: `${PK}#INVITE_EMAILS`, sk: '00000000' } });
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('retries a transaction conflict, then e-mails the invitee once', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejectsOnce(transactionCanceled('TransactionConflict', 'None')).resolves({});

    // Act
    const invite = await createInvite(MERCHANT, input);

    // Assess
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 2);
    expect(sesMock).toHaveReceivedCommandExactlyOnceWith(SendEmailCommand, {
      Destination: { ToAddresses: ['new@x.example'] },
      ReplyToAddresses: ['owner@acme.example'],
    });
    expect(invite.notification_pending_at).toBe(invite.created_at);
  });
});
