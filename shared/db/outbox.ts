import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, TABLE_NAME } from './client';
import type { Key } from './keys';
import { GSI2 } from './table-def';

/**
 * The keys of up to `limit` items with an entry on the sparse outbox index (gsi2) under
 * `partition` (`OUTBOX` orders, `NOTIFY` e-mails) that has waited at least `olderThanSeconds`,
 * oldest first. Both relays read their work here.
 */
export const outboxEntries = async (partition: string, olderThanSeconds: number, limit: number): Promise<Key[]> => {
  const cutoff = new Date(Date.now() - olderThanSeconds * 1000).toISOString();
  const { Items = [] } = await ddb.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      IndexName: GSI2.indexName,
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk <= :cutoff',
      ExpressionAttributeValues: { ':pk': partition, ':cutoff': cutoff },
      Limit: limit,
    }),
  );
  return Items.map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
};
