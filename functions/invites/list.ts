import { route } from '#functions/routes';
import { listInvites, toInviteResponse } from '#shared/domain/invites';
import { apiHandler } from '#shared/http/api-handler';
import { invitePagination } from '#shared/http/pagination';
import { inviteListQuery } from '#shared/schemas/program';

export const handler = apiHandler(route('invites-list'), { query: inviteListQuery }, async ({ merchant, query }) => {
  const { total, invites } = await listInvites(merchant.id, query);
  return { data: invites.map(toInviteResponse), meta: { pagination: invitePagination(total, invites.length, query) } };
});
