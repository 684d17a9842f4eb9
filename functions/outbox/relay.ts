import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { functionTable } from '#shared/db/client';
import { oldestOutboxEntry } from '#shared/db/entities/outbox';
import { logger } from '#shared/logger';
import { emitMetrics, METRIC } from '#shared/metrics';
import { relayPendingOrders } from '#shared/queue/orders';

/** Orders whose outbox entry is younger than this are left to the creating request's fast path. */
const OLDER_THAN_SECONDS = Number(process.env.OUTBOX_MIN_AGE_SECONDS ?? '30');

/** Seconds since the oldest accepted order still waiting for its queue send was accepted (0 when none). */
const oldestOutboxAgeSeconds = async (now = Date.now()): Promise<number> => {
  const since = await oldestOutboxEntry(functionTable, 'OUTBOX');
  const acceptedAt = since === undefined ? Number.NaN : Date.parse(since);
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
