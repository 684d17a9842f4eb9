import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import { ddb, TABLE_NAME } from '../../shared/db/client';
import { indexKeys } from '../../shared/db/keys';
import { GSI2 } from '../../shared/db/table-def';
import { logger } from '../../shared/logger';
import { emitMetrics, METRIC } from '../../shared/metrics';
import { relayPendingOrders } from '../../shared/queue/orders';

/** Orders whose outbox entry is younger than this are left to the creating request's fast path. */
const OLDER_THAN_SECONDS = Number(process.env.OUTBOX_MIN_AGE_SECONDS ?? '30');

/**
 * Seconds since the oldest accepted order still waiting for its queue send was accepted (0 when
 * none): one Query of one key on the sparse outbox index, whose sort key is the accepted-at time.
 */
const oldestOutboxAgeSeconds = async (now = Date.now()): Promise<number> => {
  const { Items = [] } = await ddb.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      IndexName: GSI2.indexName,
      KeyConditionExpression: 'gsi2pk = :pk',
      ExpressionAttributeValues: { ':pk': indexKeys.outboxPartition },
      Limit: 1,
    }),
  );
  const acceptedAt = Date.parse(String(Items[0]?.[GSI2.sortKey] ?? ''));
  return Number.isNaN(acceptedAt) ? 0 : Math.max(0, Math.round((now - acceptedAt) / 1000));
};

/**
 * The outbox relay, run on a schedule (EventBridge in AWS, a timer in `npm start`): puts every
 * accepted order whose queue send failed onto the orders queue, then reports how old the oldest
 * entry still waiting is (the outbox-age alarm's metric).
 */
export const handler = middy()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async () => {
    const sent = await relayPendingOrders({ olderThanSeconds: OLDER_THAN_SECONDS });
    if (sent > 0) logger.info('Relayed accepted orders to the orders queue', { sent });
    emitMetrics({ [METRIC.outboxOldestAgeSeconds]: await oldestOutboxAgeSeconds() });
    return { sent };
  });
