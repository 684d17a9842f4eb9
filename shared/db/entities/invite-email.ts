import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '#shared/db/table-def';
import type { TransactPart } from '#shared/db/transact';
import { itemKey, type Key } from './base';

/** Guard item: one invitation per e-mail address and merchant. Put in the invite's transaction. */
export const inviteEmailKey = (merchantId: string, email: string): Key => itemKey(merchantId, `INVITE_EMAIL#${email.toLowerCase()}`);

export const inviteEmailRecord = (merchantId: string, email: string, inviteUuid: string) => ({
  ...inviteEmailKey(merchantId, email),
  type: 'invite_email',
  invite_uuid: inviteUuid,
});

export const putInviteEmailPart = (merchantId: string, email: string, inviteUuid: string): TransactPart => ({
  Put: { Item: inviteEmailRecord(merchantId, email, inviteUuid), ConditionExpression: 'attribute_not_exists(pk)' },
});

export const inviteEmailTaken = async ({ ddb, table }: TableRef, merchantId: string, email: string): Promise<boolean> => {
  const { Item } = await ddb.send(new GetCommand({ TableName: table, Key: inviteEmailKey(merchantId, email), ProjectionExpression: 'pk' }));
  return Item !== undefined;
};
