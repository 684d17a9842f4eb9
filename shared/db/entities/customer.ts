import { queryKey } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { itemKey, type Key, updateItem } from './base';

/** A merchant's customer, looked up or created by e-mail (lowercased) when an order names one. */
export const customerKey = (merchantId: string, email: string): Key => itemKey(merchantId, `CUSTOMER#${email.toLowerCase()}`);

type Customer = { name: string | null; email: string };

/** The customer as its first order names it, for orders written without the API (a seed). */
export const customerRecord = (merchantId: string, customer: Customer, at: string) => ({
  ...customerKey(merchantId, customer.email),
  type: 'customer',
  email: customer.email.toLowerCase(),
  name: customer.name,
  created_at: at,
  updated_at: at,
});

/** Looks up the customer and creates it when there is none (an idempotent UpdateItem: every order of the customer reaches this item). */
export const lookUpOrCreateCustomer = async (db: TableRef, merchantId: string, customer: Customer, now: string): Promise<void> => {
  const key = customerKey(merchantId, customer.email);
  if (await queryKey(db, key, { ProjectionExpression: 'pk' })) return;
  await updateItem(db, {
    Key: key,
    UpdateExpression:
      'SET #type = :type, email = if_not_exists(email, :email), #name = if_not_exists(#name, :name), created_at = if_not_exists(created_at, :now), updated_at = if_not_exists(updated_at, :now)',
    ExpressionAttributeNames: { '#type': 'type', '#name': 'name' },
    ExpressionAttributeValues: { ':type': 'customer', ':email': customer.email.toLowerCase(), ':name': customer.name, ':now': now },
  });
};
