import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { logger } from '../../shared/logger';
import { relayPendingOrders } from '../../shared/queue/orders';

/** Orders whose outbox entry is younger than this are left to the creating request's fast path. */
const OLDER_THAN_SECONDS = Number(process.env.OUTBOX_MIN_AGE_SECONDS ?? '30');

/**
 * The outbox relay, run on a schedule (EventBridge in AWS, a timer in `npm start`): puts every
 * accepted order whose queue send failed onto the orders queue.
 */
export const handler = middy()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async () => {
    const sent = await relayPendingOrders({ olderThanSeconds: OLDER_THAN_SECONDS });
    if (sent > 0) logger.info('Relayed accepted orders to the orders queue', { sent });
    return { sent };
  });
