import { describe, expect, it } from 'vitest';
import { affiliateRequestRecord } from '#shared/db/entities/affiliate-request';
import { inviteRecord } from '#shared/db/entities/invite';
import { invitationLink, invitationMessage, notificationFor, requestDecisionMessage, sendEmailInput } from '#shared/mail/messages';

const M = 'merchant-1';
const BASE = 'https://dashboard.example/invitations/';

describe('invitation e-mail', () => {
  const invite = inviteRecord(M, {
    seq: 1,
    email: 'New@Example.com',
    sender_email: 'owner@acme.example',
    content: 'Join <us>!\nWe pay well.',
  });

  it('goes to the invitee, replies to the sender, and carries the merchant name, the content and the link', () => {
    const message = invitationMessage(invite, 'Acme & Co', BASE);
    const link = `https://dashboard.example/invitations/${invite.uuid}`;
    expect(message.to).toBe('new@example.com');
    expect(message.replyTo).toBe('owner@acme.example');
    expect(message.subject).toContain('Acme & Co');
    expect(message.text).toContain('Join <us>!\nWe pay well.');
    expect(message.text).toContain(link);
    expect(message.html).toContain('Acme &amp; Co');
    expect(message.html).toContain('Join &lt;us&gt;!<br>We pay well.');
    expect(message.html).toContain(`<a href="${link}">`);
    expect(message.html).not.toContain('<us>');
  });

  it('joins the link base and the uuid with exactly one slash', () => {
    expect(invitationLink('https://x.example/inv', 'u-1')).toBe('https://x.example/inv/u-1');
    expect(invitationLink('https://x.example/inv//', 'u-1')).toBe('https://x.example/inv/u-1');
  });

  it('has no content paragraph and no reply-to when there is none', () => {
    const bare = invitationMessage(inviteRecord(M, { seq: 2, email: 'a@b.example' }), 'Acme', BASE);
    expect(bare.replyTo).toBeUndefined();
    expect(bare.text.split('\n\n')).toHaveLength(3);
  });
});

describe('decision e-mails', () => {
  const affiliate = { slug: 'bob', name: 'Bob', email: 'bob@x.example' };

  it('tells the affiliate it was accepted, or declined', () => {
    const accepted = requestDecisionMessage({ status: 'accepted', affiliate }, 'Acme');
    expect(accepted).toMatchObject({ to: 'bob@x.example', subject: 'Acme accepted your affiliate request' });
    expect(accepted.text).toContain('"bob"');
    const declined = requestDecisionMessage({ status: 'declined', affiliate }, 'Acme');
    expect(declined).toMatchObject({ to: 'bob@x.example', subject: 'Acme declined your affiliate request' });
    expect(declined.text).toContain('has declined');
  });

  it('owes nothing for a pending request', () => {
    expect(notificationFor(affiliateRequestRecord(M, { seq: 1, affiliate }), 'Acme', BASE)).toBeUndefined();
    expect(notificationFor(affiliateRequestRecord(M, { seq: 2, affiliate, status: 'declined' }), 'Acme', BASE)?.subject).toContain(
      'declined',
    );
  });
});

describe('sendEmailInput', () => {
  it('sends from MAIL_FROM with text and HTML bodies', () => {
    const input = sendEmailInput(
      { to: 'a@b.example', replyTo: 'r@b.example', subject: 'S', text: 'T', html: '<p>H</p>' },
      'from@x.example',
    );
    expect(input).toEqual({
      Source: 'from@x.example',
      Destination: { ToAddresses: ['a@b.example'] },
      ReplyToAddresses: ['r@b.example'],
      Message: {
        Subject: { Data: 'S', Charset: 'UTF-8' },
        Body: { Text: { Data: 'T', Charset: 'UTF-8' }, Html: { Data: '<p>H</p>', Charset: 'UTF-8' } },
      },
    });
  });
});
