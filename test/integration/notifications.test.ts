import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { putAll } from '../../shared/admin/store';
import { affiliateRequestKey, affiliateRequestRecord } from '../../shared/db/entities/affiliate-request';
import { inviteKey, inviteRecord } from '../../shared/db/entities/invite';
import { inviteEmailRecord } from '../../shared/db/entities/invite-email';
import { owedNotification } from '../../shared/db/entities/notification';
import { eventually, merchantFixture, seedOne, sentEmails, storeFor } from './helpers';

/**
 * An e-mail SES failed to send when the request was answered leaves its item owing it
 * (notification_pending_at + a NOTIFY entry on gsi2, written with the state change). The
 * notification relay, which `npm start` runs on a timer like EventBridge does in AWS, sends it.
 */
describe('the notification relay', () => {
  it('sends the e-mails invites and decided requests still owe, once, and settles them', async () => {
    // Prepare: items left owing their e-mail a minute ago, as after an SES outage
    const merchant = await seedOne(merchantFixture({ key: 'notify', name: 'Relay Outdoor' }));
    const store = storeFor('live');
    const owedSince = new Date(Date.now() - 60_000).toISOString();
    const inviteEmail = `invitee-${randomUUID()}@example.com`;
    const applicantEmail = `applicant-${randomUUID()}@example.com`;
    const invite = { ...inviteRecord(merchant.id, { seq: 1, email: inviteEmail, sender_email: 'owner@merchant.example', content: 'Come along' }, owedSince), ...owedNotification(owedSince) };
    const request = {
      ...affiliateRequestRecord(merchant.id, { seq: 1, status: 'accepted', affiliate: { slug: `ap-${randomUUID().slice(0, 8)}`, name: 'Applicant', email: applicantEmail } }, owedSince),
      ...owedNotification(owedSince),
    };
    await putAll(store, [invite, inviteEmailRecord(merchant.id, inviteEmail, invite.uuid), request]);

    // Act: wait for the relay's next runs
    const mails = await eventually(async () => {
      const emails = (await sentEmails()).filter((email) => [inviteEmail, applicantEmail].includes(email.destination.to[0] ?? ''));
      return emails.length >= 2 ? emails : undefined;
    }, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a few more relay runs: nothing is sent twice

    // Assess
    const again = (await sentEmails()).filter((email) => [inviteEmail, applicantEmail].includes(email.destination.to[0] ?? ''));
    expect(again).toHaveLength(2);
    expect(mails.find((email) => email.destination.to[0] === inviteEmail)?.subject).toContain('Relay Outdoor');
    expect(mails.find((email) => email.destination.to[0] === applicantEmail)?.subject).toContain('accepted');
    for (const key of [inviteKey(merchant.id, invite.uuid), affiliateRequestKey(merchant.id, request.uuid)]) {
      const { Item } = await store.ddb.send(new GetCommand({ TableName: store.table, Key: key }));
      expect(Item).toMatchObject({ notified_at: expect.any(String) });
      expect(Item).not.toHaveProperty('notification_pending_at');
      expect(Item).not.toHaveProperty('gsi2pk');
    }
  });
});
