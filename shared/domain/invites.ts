import { functionTable } from '../db/client';
import { SK } from '../db/keys';
import { slicePage, type PageQuery } from '../http/pagination';
import { newestFirst, type InviteItem } from './program-model';
import { queryPrefix } from './program-store';

/**
 * Invitation reads. Creating one (which e-mails) lives in invite-affiliate.ts, so that the read
 * function does not load the mail modules or need their environment (MAIL_FROM, INVITE_LINK_BASE_URL).
 */
export { toInviteResponse } from './program-model';

/** Newest invitation first (created_at), then by uuid. */
export const inviteOrder = newestFirst<InviteItem>((invite) => invite.created_at, (invite) => invite.uuid);

/**
 * One page of the merchant's invitations, optionally those whose e-mail contains `email`
 * (case-insensitive: addresses are stored lowercase). One Query on the merchant partition
 * (INVITE# prefix; the INVITE_EMAIL# guards do not share it), filtered server-side.
 */
export const listInvites = async (merchantId: string, query: PageQuery & { email?: string | null }): Promise<{ total: number; invites: InviteItem[] }> => {
  const filter = query.email ? { expression: 'contains(email, :email)', values: { ':email': query.email.toLowerCase() } } : undefined;
  const invites = (await queryPrefix<InviteItem>(functionTable, merchantId, SK.invite, filter)).sort(inviteOrder);
  return { total: invites.length, invites: slicePage(invites, query) };
};
