import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import type { TransactPart } from '#shared/db/transact';
import { itemKey, type Key, parseStoredOptional } from './base';

/** Guard item: one invitation per e-mail address and merchant. Put in the invite's transaction. */
export const inviteEmailKey = (merchantId: string, email: string): Key => itemKey(merchantId, `INVITE_EMAIL#${email.toLowerCase()}`);

export const inviteEmailRecord = (merchantId: string, email: string, inviteUuid: string) => ({
  ...inviteEmailKey(merchantId, email),
  type: 'invite_email',
  invite_uuid: inviteUuid,
});

/** The guard's part of the invite transaction; when it is refused, the guard as it was comes back (its invite's uuid). */
export const putInviteEmailPart = (merchantId: string, email: string, inviteUuid: string): TransactPart => ({
  Put: {
    Item: inviteEmailRecord(merchantId, email, inviteUuid),
    ConditionExpression: 'attribute_not_exists(pk)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});

const guardSchema = z.object({ invite_uuid: z.string() });

/** The uuid of the invite that holds an address (a read before the invite: the guard still decides races). */
export const inviteEmailHolder = async ({ ddb, table }: TableRef, merchantId: string, email: string): Promise<string | undefined> => {
  const { Item } = await ddb.send(
    new GetCommand({ TableName: table, Key: inviteEmailKey(merchantId, email), ProjectionExpression: 'invite_uuid' }),
  );
  return parseStoredOptional('invite_email', guardSchema, Item)?.invite_uuid;
};

/** The holder named by a refused guard's old image (see putInviteEmailPart). */
export const inviteHolderOf = (oldGuard: Record<string, unknown> | undefined): string | undefined =>
  parseStoredOptional('invite_email', guardSchema, oldGuard)?.invite_uuid;
