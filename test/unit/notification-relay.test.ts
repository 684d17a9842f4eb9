import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { relayPendingNotifications } from '../../shared/mail/relay';
import { ddbMock, resetAwsMocks } from './support/aws';

const sesMock = mockClient(SESClient);
const MERCHANT = '0d3f5c1e-6a2b-4c8d-9e0f-1a2b3c4d5e6f';
const INVITE_KEY = { pk: `M#${MERCHANT}`, sk: 'INVITE#a05d4c6e-7081-4293-8e1f-4a5b6c7d8e9f' };
const owedInvite = {
  ...INVITE_KEY,
  gsi1pk: `M#${MERCHANT}#invites#all`,
  gsi1sk: '000000000003',
  gsi2pk: 'NOTIFY',
  gsi2sk: '2026-03-01T10:00:00.000Z',
  type: 'invite',
  uuid: 'a05d4c6e-7081-4293-8e1f-4a5b6c7d8e9f',
  seq: 3,
  email: 'erin@example.com',
  sender_email: 'owner@acme.example',
  content: null,
  link_used_at: null,
  created_at: '2026-03-01T10:00:00.000Z',
  updated_at: '2026-03-01T10:00:00.000Z',
  notification_pending_at: '2026-03-01T10:00:00.000Z',
};

beforeEach(() => {
  resetAwsMocks();
  sesMock.reset();
  ddbMock.on(QueryCommand, { IndexName: 'gsi2' }).resolvesOnce({ Items: [INVITE_KEY] }).resolves({ Items: [] });
  ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: owedInvite });
  ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: 'MERCHANT' } }).resolves({ Item: { name: 'Acme', currency: 'EUR' } });
});

describe('relayPendingNotifications', () => {
  it('queries only NOTIFY entries older than the minimum age, sends the owed e-mail and settles it', async () => {
    // Prepare
    sesMock.on(SendEmailCommand).resolves({ MessageId: 'm-1' });

    // Act
    const result = await relayPendingNotifications({ olderThanSeconds: 60 });

    // Assess
    expect(result).toEqual({ sent: 1, failed: 0 });
    const query = ddbMock.commandCalls(QueryCommand)[0]?.args[0].input;
    expect(query?.ExpressionAttributeValues?.[':pk']).toBe('NOTIFY');
    expect(Date.parse(query?.ExpressionAttributeValues?.[':cutoff'] as string)).toBeLessThanOrEqual(Date.now() - 60_000);
    expect(sesMock.commandCalls(SendEmailCommand)[0]?.args[0].input.Destination?.ToAddresses).toEqual(['erin@example.com']);
    expect(ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression).toContain('REMOVE notification_pending_at, notification_failed_at, gsi2pk, gsi2sk');
  });

  it('when SES still fails: records the failure, reschedules the entry, keeps what is owed and stops the run', async () => {
    // Prepare
    sesMock.on(SendEmailCommand).rejects(Object.assign(new Error('Throttling'), { name: 'Throttling' }));

    // Act
    const result = await relayPendingNotifications({ olderThanSeconds: 60 });

    // Assess
    expect(result).toEqual({ sent: 0, failed: 1 });
    const update = ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input;
    expect(update?.UpdateExpression).toBe('SET notification_failed_at = :now, gsi2sk = :now');
    expect(ddbMock.commandCalls(QueryCommand)).toHaveLength(1);
  });

  it('drops an entry whose item no longer owes anything, without sending', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: INVITE_KEY }).resolves({ Item: { ...owedInvite, notification_pending_at: undefined } });

    // Act
    const result = await relayPendingNotifications();

    // Assess
    expect(result).toEqual({ sent: 0, failed: 0 });
    expect(sesMock.commandCalls(SendEmailCommand)).toHaveLength(0);
    expect(ddbMock.commandCalls(UpdateCommand)[0]?.args[0].input.UpdateExpression).toBe('REMOVE gsi2pk, gsi2sk');
  });
});
