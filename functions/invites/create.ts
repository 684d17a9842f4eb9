import { route } from '#functions/routes';
import { createInvite, toInviteResponse } from '#shared/domain/invite-affiliate';
import { postApiHandler } from '#shared/http/post-api-handler';
import { inviteCreateBody } from '#shared/schemas/program';

/** 200 (the spec's status, not 201) with data.invite; the invitation e-mail goes out after the write. */
export const handler = postApiHandler(route('invites-create'), { body: inviteCreateBody }, async ({ merchant, body, identity }) => ({
  data: { invite: toInviteResponse(await createInvite(merchant, body, identity)) },
}));
