import type { SendEmailCommandInput } from '@aws-sdk/client-ses';
import { type AffiliateRequestItem, parseAffiliateRequest } from '#shared/db/entities/affiliate-request';
import { type InviteItem, parseInvite } from '#shared/db/entities/invite';

/** The affiliate-program e-mails, composed without I/O, so the API and the resend build the same message from an item. */
export type MailMessage = { to: string; replyTo?: string; subject: string; text: string; html: string };

export const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] as string);

/** Plain-text paragraphs -> HTML paragraphs, escaped (merchant content is user input). */
export const htmlOf = (paragraphs: readonly string[], trustedTail = '') =>
  `<!doctype html><html><body>${paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph).replace(/\r?\n/g, '<br>')}</p>`).join('')}${trustedTail}</body></html>`;

/** The invitation link: the dashboard's invitation page for this invite. */
export const invitationLink = (linkBase: string, inviteUuid: string) => `${linkBase.replace(/\/+$/, '')}/${inviteUuid}`;

export const invitationMessage = (
  invite: Pick<InviteItem, 'uuid' | 'email' | 'sender_email' | 'content'>,
  merchantName: string,
  linkBase: string,
): MailMessage => {
  const link = invitationLink(linkBase, invite.uuid);
  const intro = `${merchantName} invites you to join its affiliate program.`;
  const paragraphs = ['Hello,', intro, ...(invite.content ? [invite.content] : [])];
  return {
    to: invite.email,
    ...(invite.sender_email ? { replyTo: invite.sender_email } : {}),
    subject: `${merchantName} invites you to its affiliate program`,
    text: `${[...paragraphs, `Accept the invitation: ${link}`].join('\n\n')}\n`,
    html: htmlOf(paragraphs, `<p><a href="${escapeHtml(link)}">Accept the invitation</a><br>${escapeHtml(link)}</p>`),
  };
};

export const requestDecisionMessage = (request: Pick<AffiliateRequestItem, 'status' | 'affiliate'>, merchantName: string): MailMessage => {
  const accepted = request.status === 'accepted';
  const paragraphs = accepted
    ? [
        `Hello ${request.affiliate.name},`,
        `${merchantName} has accepted your request to join its affiliate program.`,
        `Orders you refer with your affiliate slug "${request.affiliate.slug}" are now attributed to you.`,
      ]
    : [`Hello ${request.affiliate.name},`, `${merchantName} has declined your request to join its affiliate program.`];
  return {
    to: request.affiliate.email,
    subject: accepted ? `${merchantName} accepted your affiliate request` : `${merchantName} declined your affiliate request`,
    text: `${paragraphs.join('\n\n')}\n`,
    html: htmlOf(paragraphs),
  };
};

/** The e-mail a stored item owes: an invite its invitation, a decided request its decision notice. */
export const notificationFor = (stored: unknown, merchantName: string, linkBase: string): MailMessage | undefined => {
  const type = typeof stored === 'object' && stored !== null && 'type' in stored ? stored.type : undefined;
  if (type === 'invite') return invitationMessage(parseInvite(stored), merchantName, linkBase);
  if (type !== 'affiliate_request') return undefined;
  const request = parseAffiliateRequest(stored);
  return request.status === 'pending' ? undefined : requestDecisionMessage(request, merchantName);
};

export const sendEmailInput = (message: MailMessage, from: string): SendEmailCommandInput => ({
  Source: from,
  Destination: { ToAddresses: [message.to] },
  ...(message.replyTo ? { ReplyToAddresses: [message.replyTo] } : {}),
  Message: {
    Subject: { Data: message.subject, Charset: 'UTF-8' },
    Body: { Text: { Data: message.text, Charset: 'UTF-8' }, Html: { Data: message.html, Charset: 'UTF-8' } },
  },
});
