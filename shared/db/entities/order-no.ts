import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '#shared/db/table-def';
import type { TransactPart } from '#shared/db/transact';
import { itemKey, type Key } from './base';

/** Guard item: order_no is unique per merchant. Put in the same transaction as the order. */
export const orderNoKey = (merchantId: string, orderNo: string): Key => itemKey(merchantId, `ORDER_NO#${orderNo}`);

export const orderNoRecord = (merchantId: string, orderNo: string, orderUuid: string) => ({
  ...orderNoKey(merchantId, orderNo),
  type: 'order_no',
  order_uuid: orderUuid,
});

export const putOrderNoPart = (merchantId: string, orderNo: string, orderUuid: string): TransactPart => ({
  Put: { Item: orderNoRecord(merchantId, orderNo, orderUuid), ConditionExpression: 'attribute_not_exists(pk)' },
});

/** Whether the order_no is taken already (a read before the create: the guard still decides races). */
export const orderNoTaken = async ({ ddb, table }: TableRef, merchantId: string, orderNo: string): Promise<boolean> => {
  const { Item } = await ddb.send(new GetCommand({ TableName: table, Key: orderNoKey(merchantId, orderNo), ProjectionExpression: 'pk' }));
  return Item !== undefined;
};
