import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import type { TableRef } from '#shared/db/table-def';
import type { TransactPart } from '#shared/db/transact';
import { itemKey, type Key, parseStoredOptional } from './base';

/** Guard item: order_no is unique per merchant. Put in the same transaction as the order. */
export const orderNoKey = (merchantId: string, orderNo: string): Key => itemKey(merchantId, `ORDER_NO#${orderNo}`);

export const orderNoRecord = (merchantId: string, orderNo: string, orderUuid: string) => ({
  ...orderNoKey(merchantId, orderNo),
  type: 'order_no',
  order_uuid: orderUuid,
});

/** The guard's part of the create transaction; when it is refused, the guard as it was comes back (its order's uuid). */
export const putOrderNoPart = (merchantId: string, orderNo: string, orderUuid: string): TransactPart => ({
  Put: {
    Item: orderNoRecord(merchantId, orderNo, orderUuid),
    ConditionExpression: 'attribute_not_exists(pk)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});

const guardSchema = z.object({ order_uuid: z.string() });

/** The uuid of the order that holds an order_no (a read before the create: the guard still decides races). */
export const orderNoHolder = async ({ ddb, table }: TableRef, merchantId: string, orderNo: string): Promise<string | undefined> => {
  const { Item } = await ddb.send(
    new GetCommand({ TableName: table, Key: orderNoKey(merchantId, orderNo), ProjectionExpression: 'order_uuid' }),
  );
  return parseStoredOptional('order_no', guardSchema, Item)?.order_uuid;
};

/** The holder named by a refused guard's old image (see putOrderNoPart). */
export const holderOf = (oldGuard: Record<string, unknown> | undefined): string | undefined =>
  parseStoredOptional('order_no', guardSchema, oldGuard)?.order_uuid;
