import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, TABLE_NAME } from '../db/client';
import { keys } from '../db/keys';
import type { Merchant } from '../db/merchants';
import { invalid, type FieldErrors } from '../http/errors';
import { invitationMessage } from '../mail/messages';
import { deliverNotification, INVITE_LINK_BASE_URL } from '../mail/send';
import type { InviteCreateInput } from '../schemas/program';
import { isoNow } from '../time';
import { inviteEmailGuard, inviteItem, owedNotification, type InviteItem } from './program-model';
import { backOff, isTransactionConflict, MAX_WRITE_ATTEMPTS } from './program-store';

export { toInviteResponse } from './program-model';

export const INVITE_MESSAGES = {
  emailTaken: 'The email has already been taken.',
  senderInvalid: 'The selected sender email is invalid.',
} as const;

/**
 * Invites an e-mail address on behalf of one of the merchant's users.
 *
 * Reads (in parallel): the sender's user item and the address's invite guard, so one 422 names
 * every failing field. Write: ONE transaction putting the invite (which carries its owed e-mail,
 * notification_pending_at) and its guard, both attribute_not_exists: of two racing invites for one
 * address exactly one commits, the other gets the same 422 on `email`. Then the e-mail is sent
 * (deliverNotification: a failed send is recorded, never undoes the invite).
 */
export const createInvite = async (merchant: Merchant, input: InviteCreateInput): Promise<InviteItem> => {
  const [sender, guard] = await Promise.all([
    ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: keys.user(merchant.id, input.sender_email) })),
    ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: keys.inviteEmail(merchant.id, input.email), ProjectionExpression: 'pk' })),
  ]);
  const errors: FieldErrors = {};
  if (guard.Item) errors.email = [INVITE_MESSAGES.emailTaken];
  if (!sender.Item) errors.sender_email = [INVITE_MESSAGES.senderInvalid];
  if (Object.keys(errors).length > 0) throw invalid(errors);

  const now = isoNow();
  const invite = {
    ...inviteItem(merchant.id, { email: input.email, sender_email: (sender.Item?.email as string) ?? input.sender_email, content: input.content ?? null }, now),
    ...owedNotification(now),
  };
  const guardItem = inviteEmailGuard(merchant.id, invite.email, invite.uuid);
  for (let attempt = 1; ; attempt++) {
    try {
      await ddb.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: TABLE_NAME, Item: invite, ConditionExpression: 'attribute_not_exists(pk)' } },
            { Put: { TableName: TABLE_NAME, Item: guardItem, ConditionExpression: 'attribute_not_exists(pk)' } },
          ],
        }),
      );
      break;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      if (error.CancellationReasons?.[1]?.Code === 'ConditionalCheckFailed') throw invalid({ email: [INVITE_MESSAGES.emailTaken] });
      if (!isTransactionConflict(error) || attempt >= MAX_WRITE_ATTEMPTS) throw error;
      await backOff(attempt);
    }
  }

  await deliverNotification(keys.invite(merchant.id, invite.uuid), invitationMessage(invite, merchant.name, INVITE_LINK_BASE_URL), {
    notification: 'invitation',
    uuid: invite.uuid,
  });
  return invite;
};
