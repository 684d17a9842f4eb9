import { itemKey } from './base';
import { uniquenessGuard } from './guard';

/** Guard item: one invitation per e-mail address (in lowercase) and merchant. Put in the invite's transaction. */
const inviteEmailGuard = uniquenessGuard({
  type: 'invite_email',
  holderField: 'invite_uuid',
  key: (merchantId, email) => itemKey(merchantId, `INVITE_EMAIL#${email.toLowerCase()}`),
});

export const {
  key: inviteEmailKey,
  record: inviteEmailRecord,
  putPart: putInviteEmailPart,
  holder: inviteEmailHolder,
  holderOf: inviteHolderOf,
} = inviteEmailGuard;
