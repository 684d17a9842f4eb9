import { functionTable } from '#shared/db/client';
import { findInvitesByEmail, type InviteItem, inviteList } from '#shared/db/entities/invite';
import { readPage } from '#shared/db/pages';
import type { PageQuery } from '#shared/page-window';

/**
 * Invitation reads. Creating one (which e-mails) lives in invite-affiliate.ts, so that the read
 * function does not load the mail modules or need their environment (MAIL_FROM, INVITE_LINK_BASE_URL).
 */
export { toInviteResponse } from './program-model';

/**
 * One page of the merchant's invitations, newest first; with `email`, those whose address contains
 * it (case-insensitive: addresses are stored lowercase), read from the e-mail projection.
 */
export const listInvites = async (
  merchantId: string,
  query: PageQuery & { email?: string | null },
): Promise<{ total: number; invites: InviteItem[] }> => {
  const { total, items } = query.email
    ? await findInvitesByEmail(functionTable, merchantId, query.email.toLowerCase(), query)
    : await readPage(functionTable, inviteList(merchantId), query);
  return { total, invites: items };
};
