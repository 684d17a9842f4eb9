import { functionTable } from '#shared/db/client';
import { applyCountChanges, takeSequence } from '#shared/db/entities/counter';
import {
  addToEmailProjection,
  type InviteItem,
  inviteCountChange,
  inviteKey,
  inviteRecord,
  putInvitePart,
} from '#shared/db/entities/invite';
import { inviteEmailTaken, putInviteEmailPart } from '#shared/db/entities/invite-email';
import { owedNotification } from '#shared/db/entities/notification';
import { getUser } from '#shared/db/entities/user';
import type { Merchant } from '#shared/db/merchants';
import { withConflictRetry } from '#shared/db/retry';
import { TransactionRefused, transactWrite } from '#shared/db/transact';
import { asError, type FieldErrors, invalid } from '#shared/errors';
import { logger } from '#shared/logger';
import { invitationMessage } from '#shared/mail/messages';
import { deliverNotification, INVITE_LINK_BASE_URL } from '#shared/mail/send';
import type { InviteCreateInput } from '#shared/schemas/program';
import { isoNow } from '#shared/time';

export { toInviteResponse } from './program-model';

export const INVITE_MESSAGES = {
  emailTaken: 'The email has already been taken.',
  senderInvalid: 'The selected sender email is invalid.',
} as const;

/**
 * Invites an e-mail address on behalf of one of the merchant's users.
 *
 * Reads (in parallel): the sender's user item and the address's invite guard, so one 422 names
 * every failing field. The invite's sequence number: one atomic ADD. Write: ONE transaction
 * putting the invite (which carries its owed e-mail) and its guard, both attribute_not_exists: of
 * two racing invites for one address exactly one commits, the other gets the same 422 on `email`.
 * After the commit: +1 on the list's block count and the address in the e-mail projection
 * (idempotent; a failure is logged), then the e-mail (a failed send never undoes the invite).
 */
export const createInvite = async (merchant: Merchant, input: InviteCreateInput): Promise<InviteItem> => {
  const db = functionTable;
  const [sender, taken] = await Promise.all([getUser(db, merchant.id, input.sender_email), inviteEmailTaken(db, merchant.id, input.email)]);
  const errors: FieldErrors = {};
  if (taken) errors.email = [INVITE_MESSAGES.emailTaken];
  if (!sender) errors.sender_email = [INVITE_MESSAGES.senderInvalid];
  if (Object.keys(errors).length > 0 || !sender) throw invalid(errors);

  const now = isoNow();
  const seq = await takeSequence(db, merchant.id, 'invites');
  const invite = {
    ...inviteRecord(merchant.id, { seq, email: input.email, sender_email: sender.email, content: input.content ?? null }, now),
    ...owedNotification(now),
  };
  try {
    await withConflictRetry(() =>
      transactWrite(db, { invite: putInvitePart(invite), guard: putInviteEmailPart(merchant.id, invite.email, invite.uuid) }),
    );
  } catch (error) {
    if (error instanceof TransactionRefused && error.refusedBy('guard')) throw invalid({ email: [INVITE_MESSAGES.emailTaken] });
    throw error;
  }
  const settled = await Promise.allSettled([
    applyCountChanges(db, merchant.id, [inviteCountChange(invite)]),
    addToEmailProjection(db, merchant.id, [invite]),
  ]);
  for (const result of settled) {
    if (result.status === 'rejected')
      logger.error('Invite committed; a follow-up write failed', { uuid: invite.uuid, error: asError(result.reason) });
  }

  await deliverNotification(inviteKey(merchant.id, invite.uuid), invitationMessage(invite, merchant.name, INVITE_LINK_BASE_URL), {
    notification: 'invitation',
    uuid: invite.uuid,
  });
  return invite;
};
