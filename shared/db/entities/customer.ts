import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '#shared/db/table-def';
import { itemKey, type Key } from './base';

/** A merchant's customer, looked up or created by e-mail (lowercased) when an order names one. */
export const customerKey = (merchantId: string, email: string): Key => itemKey(merchantId, `CUSTOMER#${email.toLowerCase()}`);

/**
 * Looks up or creates the customer: one idempotent UpdateItem (if_not_exists), outside any
 * transaction, because every order of one customer writes this item (a hot item, DESIGN.md).
 */
export const upsertCustomer = (
  { ddb, table }: TableRef,
  merchantId: string,
  customer: { name: string | null; email: string },
  now: string,
) =>
  ddb.send(
    new UpdateCommand({
      TableName: table,
      Key: customerKey(merchantId, customer.email),
      UpdateExpression:
        'SET #type = :type, email = if_not_exists(email, :email), #name = if_not_exists(#name, :name), created_at = if_not_exists(created_at, :now), updated_at = :now',
      ExpressionAttributeNames: { '#type': 'type', '#name': 'name' },
      ExpressionAttributeValues: { ':type': 'customer', ':email': customer.email.toLowerCase(), ':name': customer.name, ':now': now },
    }),
  );
