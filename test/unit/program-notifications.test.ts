import 'aws-sdk-client-mock-vitest/extend';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { SendEmailCommand, SESClient } from '@aws-sdk/client-ses';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { keys } from '../../shared/db/keys';
import { acceptAffiliateRequest, declineAffiliateRequest } from '../../shared/domain/affiliate-request-decisions';
import { createInvite } from '../../shared/domain/invite-affiliate';
import { affiliateRequestItem } from '../../shared/domain/program-model';
import { ApiError } from '../../shared/http/errors';
import { logger } from '../../shared/logger';

/**
 * "Durable state first, then e-mail": the transition commits before SES is called, an SES failure
 * never undoes it (the API still answers with the committed state), and the failure is recorded
 * on the item for the resend command.
 */
const ddbMock = mockClient(DynamoDBDocumentClient);
const sesMock = mockClient(SESClient);

const MERCHANT = { id: 'm-1', name: 'Acme', currency: 'EUR' };
const pending = affiliateRequestItem(MERCHANT.id, { affiliate: { slug: 'bob', name: 'Bob', email: 'bob@x.example' } }, '2026-03-01T00:00:00.000Z');
const REQUEST_KEY = keys.affiliateRequest(MERCHANT.id, pending.uuid);
const sesDown = Object.assign(new Error('Email address is not verified: bob@x.example'), { name: 'MessageRejected' });

/** How an owed e-mail is settled (shared/mail/settle.ts): sent, or failed and due again. */
const SENT_UPDATE =
  'SET notified_at = :now REMOVE notification_pending_at, notification_failed_at, notification_error, notification_attempts, notification_parked_at, gsi2pk, gsi2sk';
const RETRY_UPDATE =
  'SET notification_failed_at = :now, notification_error = :error, notification_attempts = :attempts, gsi2pk = :entry, gsi2sk = :due REMOVE notification_parked_at';

const updates = () => ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input);

beforeEach(() => {
  ddbMock.reset();
  sesMock.reset();
  ddbMock.on(UpdateCommand).resolves({});
});

describe('decline', () => {
  it('commits the decline, then e-mails the affiliate and clears the owed e-mail', async () => {
    // Prepare
    ddbMock.on(UpdateCommand, { Key: REQUEST_KEY, ReturnValues: 'ALL_NEW' }).resolves({ Attributes: { ...pending, status: 'declined' } });
    sesMock.on(SendEmailCommand).resolves({ MessageId: 'x' });

    // Act
    const declined = await declineAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(declined.status).toBe('declined');
    expect(updates()[0]).toMatchObject({ ConditionExpression: 'attribute_exists(pk) AND #status = :pending', ExpressionAttributeValues: { ':decision': 'declined' } });
    expect(updates()[0]?.UpdateExpression).toContain('notification_pending_at = :owed, gsi2pk = :outbox, gsi2sk = :owed');
    expect(sesMock).toHaveReceivedCommandWith(SendEmailCommand, { Destination: { ToAddresses: ['bob@x.example'] }, Source: 'affiliates@unit.test' });
    expect(updates()[1]).toMatchObject({ Key: REQUEST_KEY, UpdateExpression: SENT_UPDATE });
  });

  it('still answers with the committed decline when SES fails, and records the failure (no undo)', async () => {
    // Prepare
    ddbMock.on(UpdateCommand, { Key: REQUEST_KEY, ReturnValues: 'ALL_NEW' }).resolves({ Attributes: { ...pending, status: 'declined' } });
    sesMock.on(SendEmailCommand).rejects(sesDown);
    const logged = vi.spyOn(logger, 'error');

    // Act
    const declined = await declineAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(declined.status).toBe('declined');
    expect(logged).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ uuid: pending.uuid, error_name: 'MessageRejected' }));
    expect(JSON.stringify(logged.mock.calls)).not.toContain('@'); // SES messages quote addresses: never logged
    expect(updates()).toHaveLength(2);
    expect(updates()[1]).toMatchObject({ Key: REQUEST_KEY, UpdateExpression: RETRY_UPDATE });
  });
});

describe('accept', () => {
  beforeEach(() => {
    ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({ Item: pending });
    ddbMock.on(GetCommand, { Key: keys.affiliate(MERCHANT.id, 'bob') }).resolves({});
    ddbMock.on(TransactWriteCommand).resolves({});
  });

  it('moves the request and creates the active affiliate in one transaction, then e-mails', async () => {
    // Prepare
    sesMock.on(SendEmailCommand).resolves({ MessageId: 'x' });

    // Act
    const accepted = await acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(accepted.status).toBe('accepted');
    const [transaction] = ddbMock.commandCalls(TransactWriteCommand);
    const items = transaction?.args[0].input.TransactItems ?? [];
    expect(items).toHaveLength(2);
    expect(items[0]?.Update).toMatchObject({ Key: REQUEST_KEY, ConditionExpression: 'attribute_exists(pk) AND #status = :pending' });
    expect(items[1]?.Put).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)', Item: { ...keys.affiliate(MERCHANT.id, 'bob'), status: 'active', accepted_at: accepted.decided_at } });
    expect(sesMock).toHaveReceivedCommandTimes(SendEmailCommand, 1);
    expect(updates()).toHaveLength(1);
  });

  it('keeps the accept when SES fails: one transaction, no compensation, failure recorded', async () => {
    // Prepare
    sesMock.on(SendEmailCommand).rejects(sesDown);

    // Act
    const accepted = await acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    expect(accepted.status).toBe('accepted');
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    expect(updates()).toEqual([expect.objectContaining({ Key: REQUEST_KEY, UpdateExpression: RETRY_UPDATE })]);
  });

  it('answers 422 and sends nothing when the request is no longer pending', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: REQUEST_KEY }).resolves({ Item: { ...pending, status: 'declined' } });

    // Act
    const outcome = acceptAffiliateRequest(MERCHANT, pending.uuid);

    // Assess
    await expect(outcome).rejects.toMatchObject({ statusCode: 422, errors: { message: ['The affiliate request has already been declined.'] } });
    expect(ddbMock).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });
});

describe('invite', () => {
  const input = { email: 'new@x.example', sender_email: 'owner@acme.example', content: null };
  const canceled = (codes: string[]) =>
    new TransactionCanceledException({ message: 'canceled', $metadata: {}, CancellationReasons: codes.map((Code) => ({ Code })) });

  beforeEach(() => {
    ddbMock.on(GetCommand, { Key: keys.user(MERCHANT.id, input.sender_email) }).resolves({ Item: { email: input.sender_email } });
    ddbMock.on(GetCommand, { Key: keys.inviteEmail(MERCHANT.id, input.email) }).resolves({});
    sesMock.on(SendEmailCommand).resolves({ MessageId: 'x' });
  });

  it('answers 422 on email, and sends nothing, when the guard loses the race', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejects(canceled(['None', 'ConditionalCheckFailed']));

    // Act
    const outcome = createInvite(MERCHANT, input);

    // Assess
    await expect(outcome).rejects.toBeInstanceOf(ApiError);
    await expect(outcome).rejects.toMatchObject({ statusCode: 422, errors: { email: ['The email has already been taken.'] } });
    expect(sesMock).not.toHaveReceivedCommand(SendEmailCommand);
  });

  it('retries a transaction conflict, then e-mails the invitee once', async () => {
    // Prepare
    ddbMock.on(TransactWriteCommand).rejectsOnce(canceled(['TransactionConflict', 'None'])).resolves({});

    // Act
    const invite = await createInvite(MERCHANT, input);

    // Assess
    expect(ddbMock).toHaveReceivedCommandTimes(TransactWriteCommand, 2);
    expect(sesMock).toHaveReceivedCommandExactlyOnceWith(SendEmailCommand, { Destination: { ToAddresses: ['new@x.example'] }, ReplyToAddresses: ['owner@acme.example'] });
    expect(invite.notification_pending_at).toBe(invite.created_at);
  });
});
