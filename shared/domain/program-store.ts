import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../db/keys';
import type { TableRef } from '../db/table-def';

/**
 * Reads shared by the affiliate-program repositories and the admin operations. They take the table
 * explicitly (functions pass their own, the admin CLI the stage it targets), so this module pulls
 * in no function-only environment.
 */

export type Filter = { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };

/**
 * Every item of one merchant whose sort key begins with `prefix` (tiers, segments, affiliates,
 * requests, invites): one Query on the merchant's partition, continued while DynamoDB pages it
 * (1 MB per page, so one call for any list of realistic size). Never a Scan. A filter is applied
 * server-side: it saves transfer, not read capacity.
 *
 * These lists are small per merchant, so list endpoints read them whole and sort and slice in
 * memory: totals are exact and any page costs what page 1 costs.
 */
export const queryPrefix = async <T>({ ddb, table }: TableRef, merchantId: string, prefix: string, filter?: Filter): Promise<T[]> => {
  const items: T[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await ddb.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ...(filter ? { FilterExpression: filter.expression } : {}),
        ...(filter?.names ? { ExpressionAttributeNames: filter.names } : {}),
        ExpressionAttributeValues: { ':pk': keys.merchantPartition(merchantId), ':prefix': prefix, ...filter?.values },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...((page.Items ?? []) as T[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
};

/** A transaction that lost to a concurrent one on the same item: safe to try again. */
export const isTransactionConflict = (error: unknown): boolean => {
  const name = (error as { name?: string } | undefined)?.name;
  if (name === 'TransactionConflictException') return true;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] } | undefined)?.CancellationReasons;
  return name === 'TransactionCanceledException' && (reasons ?? []).some((reason) => reason.Code === 'TransactionConflict');
};

/** Short random back-off before retrying a conflicted write. */
export const backOff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * Math.min(attempt, 5)));

/** Conditional writes retried on conflict at most this often before the request fails (500). */
export const MAX_WRITE_ATTEMPTS = 8;
