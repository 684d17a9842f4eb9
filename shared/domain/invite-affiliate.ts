import { functionTable } from '#shared/db/client';
import { applyCountChanges, markCountsForRecount, takeSequence } from '#shared/db/entities/counter';
import {
  addToEmailProjection,
  getInvite,
  type InviteItem,
  inviteCountChange,
  inviteKey,
  inviteRecord,
  putInvitePart,
} from '#shared/db/entities/invite';
import { inviteEmailHolder, inviteHolderOf, putInviteEmailPart } from '#shared/db/entities/invite-email';
import { owedNotification } from '#shared/db/entities/notification';
import { getUser } from '#shared/db/entities/user';
import type { Merchant } from '#shared/db/merchants';
import { withWriteRetry } from '#shared/db/retry';
import { TransactionRefused, transactWrite } from '#shared/db/transact';
import { asError, type FieldErrors, INVITE_MESSAGES, invalid, keyReused } from '#shared/errors';
import { logger } from '#shared/logger';
import { invitationMessage } from '#shared/mail/messages';
import { deliverNotification, INVITE_LINK_BASE_URL } from '#shared/mail/send';
import { type RequestIdentity, requestIdentity } from '#shared/request-identity';
import type { InviteCreateInput } from '#shared/schemas/program';
import { isoNow } from '#shared/time';

export { toInviteResponse } from './program-model';

/** The invite's writes after its commit, failures logged: whether all were done (if not, the e-mail's follow-up redoes them). */
const settleInvite = async (merchant: Merchant, invite: InviteItem, counted: Promise<void>): Promise<boolean> => {
  const settled = await Promise.allSettled([counted, addToEmailProjection(functionTable, merchant.id, [invite])]);
  for (const result of settled) {
    if (result.status === 'rejected')
      logger.error('Invite committed; a follow-up write failed', {
        merchant_id: merchant.id,
        uuid: invite.uuid,
        error: asError(result.reason),
      });
  }
  return settled.every((result) => result.status === 'fulfilled');
};

/** A retry of an invite an earlier attempt committed: answered as the first time, its count block marked for recount. */
const recoverInvite = async (merchant: Merchant, uuid: string, input: InviteCreateInput): Promise<InviteItem> => {
  const invite = await getInvite(functionTable, merchant.id, uuid, true);
  if (!invite) throw new Error(`Invite ${uuid} refused its create as existing, and cannot be read`);
  if (invite.email.toLowerCase() !== input.email.toLowerCase()) throw keyReused();
  await settleInvite(merchant, invite, markCountsForRecount(functionTable, merchant.id, [inviteCountChange(invite)]));
  return invite;
};

/** Invites an address: ONE transaction puts the invite and its address's guard, then e-mails (docs/design-notes.md#affiliate-program). */
export const createInvite = async (
  merchant: Merchant,
  input: InviteCreateInput,
  identity: RequestIdentity = requestIdentity(merchant.id, undefined),
): Promise<InviteItem> => {
  const db = functionTable;
  const uuid = identity.newUuid('invite');
  const [sender, holder] = await Promise.all([
    getUser(db, merchant.id, input.sender_email),
    inviteEmailHolder(db, merchant.id, input.email),
  ]);
  if (holder === uuid) return recoverInvite(merchant, uuid, input);
  const errors: FieldErrors = {};
  if (holder !== undefined) errors.email = [INVITE_MESSAGES.emailTaken];
  if (!sender) errors.sender_email = [INVITE_MESSAGES.senderInvalid];
  if (Object.keys(errors).length > 0 || !sender) throw invalid(errors);

  const now = isoNow();
  const seq = await takeSequence(db, merchant.id, 'invites');
  const record = inviteRecord(
    merchant.id,
    { uuid, seq, email: input.email, sender_email: sender.email, content: input.content ?? null },
    now,
  );
  const invite = { ...record, ...owedNotification(record, now) };
  try {
    await withWriteRetry(() =>
      transactWrite(db, { invite: putInvitePart(invite), guard: putInviteEmailPart(merchant.id, invite.email, invite.uuid) }),
    );
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
    if (error.refusedBy('invite') || inviteHolderOf(error.oldItems.guard) === uuid) return recoverInvite(merchant, uuid, input);
    throw invalid({ email: [INVITE_MESSAGES.emailTaken] });
  }
  if (!(await settleInvite(merchant, invite, applyCountChanges(db, merchant.id, [inviteCountChange(invite)])))) return invite;
  await deliverNotification(inviteKey(merchant.id, invite.uuid), invitationMessage(invite, merchant.name, INVITE_LINK_BASE_URL), {
    notification: 'invitation',
    uuid: invite.uuid,
  });
  return invite;
};
