import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import type { TransactPart } from '#shared/db/transact';
import { getStored, type Key, parseStoredOptional } from './base';

/** A uniqueness guard put in its holder's create transaction: refused, it names the holder (shared/request-identity.ts). */
export const uniquenessGuard = (options: { type: string; holderField: string; key: (merchantId: string, value: string) => Key }) => {
  const { type, holderField, key } = options;
  const schema = z.object({ [holderField]: z.string() });
  const record = (merchantId: string, value: string, holder: string) => ({ ...key(merchantId, value), type, [holderField]: holder });
  return {
    key,
    record,
    /** The guard's part of its holder's create transaction. */
    putPart: (merchantId: string, value: string, holder: string): TransactPart => ({
      Put: {
        Item: record(merchantId, value, holder),
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    }),
    /** Who holds the value now (a read before the create: the guard still decides races). */
    holder: async (db: TableRef, merchantId: string, value: string): Promise<string | undefined> =>
      (await getStored(db, type, schema, key(merchantId, value), { ProjectionExpression: holderField }))?.[holderField],
    /** The holder named by a refused guard's old image. */
    holderOf: (oldGuard: Record<string, unknown> | undefined) => parseStoredOptional(type, schema, oldGuard)?.[holderField],
  };
};
