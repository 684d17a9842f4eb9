import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../table-def';
import { itemKey, type Key } from './base';

/** The commission record of one order: `COMMISSION#<order uuid>`, the processor's idempotency record. */
export const commissionKey = (merchantId: string, orderUuid: string): Key => itemKey(merchantId, `COMMISSION#${orderUuid}`);

/** Writes the record unless the order has one; returns whether this call wrote it. */
export const putCommissionIfAbsent = async ({ ddb, table }: TableRef, merchantId: string, orderUuid: string, record: Record<string, unknown>): Promise<boolean> => {
  try {
    await ddb.send(new PutCommand({ TableName: table, Item: { ...commissionKey(merchantId, orderUuid), ...record }, ConditionExpression: 'attribute_not_exists(pk)' }));
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};
