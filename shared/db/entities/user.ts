import * as z from 'zod/mini';
import { queryKeyPrefix } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { itemKey, type Key, merchantPk, nullableString, storedItem } from './base';

/** A user of the merchant's dashboard (a possible invitation sender): `USER#<email>` (lowercase). */
export const userKey = (merchantId: string, email: string): Key => itemKey(merchantId, `USER#${email.toLowerCase()}`);

const userSchema = z.object({ email: z.string(), name: nullableString() });
export type UserItem = z.output<typeof userSchema>;

export const userRecord = (merchantId: string, user: { email: string; name?: string | null }) => ({
  ...userKey(merchantId, user.email),
  type: 'user',
  email: user.email.toLowerCase(),
  name: user.name ?? null,
});

const user = storedItem('user', userSchema, userKey);
export const getUser = user.get;

/** The merchant's dashboard users, at most `limit` (whom the service writes to about the merchant's own setup). */
export const merchantUsers = async (db: TableRef, merchantId: string, limit: number): Promise<UserItem[]> =>
  (await queryKeyPrefix(db, merchantPk(merchantId), 'USER#')).slice(0, limit).map(user.parse);
