import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { affiliateRequestKey, affiliateRequestRecord } from '#shared/db/entities/affiliate-request';
import { batchPut } from '#shared/db/entities/batch';
import { inviteKey, inviteRecord } from '#shared/db/entities/invite';
import { inviteEmailRecord } from '#shared/db/entities/invite-email';
import { owedNotification } from '#shared/db/entities/notification';
import { MAX_PERMANENT_ATTEMPTS } from '#shared/mail/settle';
import { api, eventually, merchantFixture, seedOne, sentEmails, storeFor } from './helpers';

/** An item as a request leaves it when SES failed: owing its e-mail since `since`. */
const owing = <T extends { pk: string; sk: string }>(item: T, since: string) => ({ ...item, ...owedNotification(item, since) });

/**
 * An e-mail SES failed to send when the request was answered leaves its item owing it
 * (notification_pending_at + a NOTIFY entry in its merchant's partition of gsi2, written with the
 * state change). The change feed sees that write on the table's stream and schedules a follow-up,
 * which sends the e-mail when it is due (after 2 s in the test stack).
 */
describe('owed e-mails (change feed and follow-ups)', () => {
  it('sends the e-mails invites and decided requests still owe, once, and settles them', async () => {
    // Prepare: items left owing their e-mail a minute ago, as after an SES outage
    const merchant = await seedOne(merchantFixture({ key: 'notify', name: 'Relay Outdoor' }));
    const store = storeFor('live');
    const owedSince = new Date(Date.now() - 60_000).toISOString();
    const inviteEmail = `invitee-${randomUUID()}@example.com`;
    const applicantEmail = `applicant-${randomUUID()}@example.com`;
    const invite = owing(
      inviteRecord(merchant.id, { seq: 1, email: inviteEmail, sender_email: 'owner@merchant.example', content: 'Come along' }, owedSince),
      owedSince,
    );
    const request = owing(
      affiliateRequestRecord(
        merchant.id,
        { seq: 1, status: 'accepted', affiliate: { slug: `ap-${randomUUID().slice(0, 8)}`, name: 'Applicant', email: applicantEmail } },
        owedSince,
      ),
      owedSince,
    );
    await batchPut(store, [invite, inviteEmailRecord(merchant.id, inviteEmail, invite.uuid), request]);

    // Act: wait for the follow-ups
    const mails = await eventually(async () => {
      const emails = (await sentEmails()).filter((email) => [inviteEmail, applicantEmail].includes(email.destination.to[0] ?? ''));
      return emails.length >= 2 ? emails : undefined;
    }, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // past another follow-up delay: nothing is sent twice

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

  it('isolates a poison e-mail: the valid one owed after it is sent, the poison one is parked with its reason after a bounded number of tries', async () => {
    // Prepare: an invite whose content is a lone surrogate, stored before the API refused such text,
    // owed before a valid one
    const merchant = await seedOne(merchantFixture({ key: 'poison' }));
    const store = storeFor('live');
    const poisonEmail = `poison-${randomUUID()}@example.com`;
    const validEmail = `valid-${randomUUID()}@example.com`;
    const poisonSince = new Date(Date.now() - 120_000).toISOString();
    const validSince = new Date(Date.now() - 60_000).toISOString();
    const poison = owing(
      inviteRecord(
        merchant.id,
        { seq: 1, email: poisonEmail, sender_email: 'owner@merchant.example', content: 'Join \ud800 us' },
        poisonSince,
      ),
      poisonSince,
    );
    const valid = owing(
      inviteRecord(merchant.id, { seq: 1, email: validEmail, sender_email: 'owner@merchant.example', content: 'Join us' }, validSince),
      validSince,
    );
    await batchPut(store, [
      poison,
      inviteEmailRecord(merchant.id, poisonEmail, poison.uuid),
      valid,
      inviteEmailRecord(merchant.id, validEmail, valid.uuid),
    ]);

    // Act: the follow-ups, one per try
    const parked = await eventually(async () => {
      const { Item } = await store.ddb.send(new GetCommand({ TableName: store.table, Key: inviteKey(merchant.id, poison.uuid) }));
      return Item?.notification_parked_at ? Item : undefined;
    }, 20_000);
    const { Item: settled } = await store.ddb.send(new GetCommand({ TableName: store.table, Key: inviteKey(merchant.id, valid.uuid) }));

    // Assess: the valid e-mail went out once, on its first try; the poison one never, and it is
    // parked with why and how often
    const mails = (await sentEmails()).filter((email) => [poisonEmail, validEmail].includes(email.destination.to[0] ?? ''));
    expect(mails.map((email) => email.destination.to[0])).toEqual([validEmail]);
    expect(settled).toMatchObject({ notified_at: expect.any(String) });
    expect(settled).not.toHaveProperty('notification_attempts');
    expect(settled).not.toHaveProperty('notification_failed_at');
    expect(parked).toMatchObject({
      notification_pending_at: poisonSince,
      notification_attempts: MAX_PERMANENT_ATTEMPTS,
      notification_error: 'MalformedMessage: the text is not well-formed Unicode',
      notification_parked_at: expect.any(String),
    });
    // off its merchant's NOTIFY entries (nothing retries it), on its PARKED ones that resend-notifications reads
    expect(parked).toMatchObject({ gsi2pk: `M#${merchant.id}#PARKED` });
  });

  it('refuses such an invite at the API now: 422 naming the field, nothing stored, no e-mail', async () => {
    // Prepare
    const merchant = await seedOne(merchantFixture({ key: 'surrogate' }));
    const email = `surrogate-${randomUUID()}@example.com`;

    // Act
    const response = await api('live', merchant.tokens.live).raw(
      'POST',
      '/api/v2/affiliates/invite',
      `{"email":"${email}","sender_email":"owner@merchant.example","content":"\\ud800"}`,
    );

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ content: ['The content field must be a valid UTF-8 string.'] });
    const invites = await api('live', merchant.tokens.live).get(`/api/v2/affiliates/invites?email=${encodeURIComponent(email)}`);
    expect(invites.body.meta.pagination.total).toBe(0);
    expect((await sentEmails()).filter((mail) => mail.destination.to[0] === email)).toEqual([]);
  });
});
