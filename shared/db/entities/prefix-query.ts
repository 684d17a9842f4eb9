import { queryKeyPrefix } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { merchantPk } from './base';

/**
 * Every item of one merchant whose sort key begins with `prefix`: one Query on the merchant's
 * partition, continued while DynamoDB pages it. Only for item types whose number per merchant is
 * capped (tiers, segments, users): their whole list is a bounded read. Never a Scan.
 */
export const queryMerchantPrefix = (db: TableRef, merchantId: string, prefix: string): Promise<unknown[]> =>
  queryKeyPrefix(db, merchantPk(merchantId), prefix);
