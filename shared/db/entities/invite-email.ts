import { itemKey } from './base';
import { uniquenessGuard } from './guard';

/** Guard item: one invitation per e-mail address (in lowercase) and merchant. Put in the invite's transaction. */
export const {
  key: inviteEmailKey,
  record: inviteEmailRecord,
  putPart: putInviteEmailPart,
  holder: inviteEmailHolder,
  holderOf: inviteHolderOf,
} = uniquenessGuard({
  type: 'invite_email',
  holderField: 'invite_uuid',
  key: (merchantId, email) => itemKey(merchantId, `INVITE_EMAIL#${email.toLowerCase()}`),
});
