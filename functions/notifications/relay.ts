import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from '#shared/logger';
import { relayPendingNotifications } from '#shared/mail/relay';

/** Owed e-mails due less than this long ago are left to the request that owes them. */
const OLDER_THAN_SECONDS = Number(process.env.NOTIFICATION_MIN_AGE_SECONDS ?? '60');

/**
 * Time kept back from the function's timeout: no new e-mail is started after that point, so the
 * one in flight (SES gives up within about 6 s, shared/sdk-timeouts.ts) is sent and settled
 * before the function is stopped. What is left is due on the next run.
 */
const SAFETY_MARGIN_MS = 10_000;

/**
 * The notification relay, run on a schedule (EventBridge in AWS, a timer in `npm start`): sends the
 * invitation and affiliate-request e-mails SES failed to send when the request was answered, each
 * on its own (shared/mail/relay.ts): one failing e-mail never holds up another, and one that keeps
 * failing is parked with its reason.
 */
export const handler = middy<unknown, unknown, Error, Context>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (_event, context) => {
    const deadline = Date.now() + Math.max(0, context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS);
    const result = await relayPendingNotifications({ olderThanSeconds: OLDER_THAN_SECONDS, deadline });
    if (result.sent + result.retry + result.parked + result.skipped > 0) logger.info('Relayed owed notification e-mails', result);
    return result;
  });
