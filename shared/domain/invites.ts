import { functionTable } from '#shared/db/client';
import { findInvitesByEmail, type InviteItem, inviteList } from '#shared/db/entities/invite';
import { readPage } from '#shared/db/pages';
import type { PageQuery } from '#shared/page-window';

// Invitation reads; creating one (which e-mails) is in invite-affiliate.ts, so readers do not load the mail modules.
export { toInviteResponse } from './program-model';

/** One page of the merchant's invitations, newest first; with `email`, those whose address contains it (any casing). */
export const listInvites = async (
  merchantId: string,
  query: PageQuery & { email?: string | null },
): Promise<{ total: number; invites: InviteItem[] }> => {
  const { total, items } = query.email
    ? await findInvitesByEmail(functionTable, merchantId, query.email.toLowerCase(), query)
    : await readPage(functionTable, inviteList(merchantId), query);
  return { total, invites: items };
};
