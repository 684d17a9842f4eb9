import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import { nullableString, storedItem } from './base';

/** A user of the merchant's dashboard (a possible invitation sender): `USER#<email>` (lowercase). */
const userSchema = z.object({ email: z.string(), name: nullableString() });
export type UserItem = z.output<typeof userSchema>;

export const userRecord = (merchantId: string, user: { email: string; name?: string | null }) => ({
  ...userKey(merchantId, user.email),
  type: 'user',
  email: user.email.toLowerCase(),
  name: user.name ?? null,
});

const user = storedItem('user', userSchema, 'USER#', (email) => email.toLowerCase());
export const { key: userKey, get: getUser } = user;

/** The merchant's dashboard users, at most `limit` (whom the service writes to about the merchant's own setup). */
export const merchantUsers = async (db: TableRef, merchantId: string, limit: number): Promise<UserItem[]> =>
  (await user.all(db, merchantId)).slice(0, limit);
