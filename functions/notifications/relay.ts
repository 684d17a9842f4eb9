import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { logger } from '../../shared/logger';
import { relayPendingNotifications } from '../../shared/mail/relay';

/** Owed e-mails younger than this are left to the request that owes them. */
const OLDER_THAN_SECONDS = Number(process.env.NOTIFICATION_MIN_AGE_SECONDS ?? '60');

/**
 * The notification relay, run on a schedule (EventBridge in AWS, a timer in `npm start`): sends the
 * invitation and affiliate-request e-mails SES failed to send when the request was answered.
 */
export const handler = middy()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async () => {
    const result = await relayPendingNotifications({ olderThanSeconds: OLDER_THAN_SECONDS });
    if (result.sent + result.failed > 0) logger.info('Relayed owed notification e-mails', result);
    return result;
  });
