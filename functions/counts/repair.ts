import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { functionTable } from '#shared/db/client';
import { repairMarkedCounts } from '#shared/db/entities/count-repair';
import { logger } from '#shared/logger';

/** Marks younger than this are left alone: the list index may not hold the newest writes yet. */
const OLDER_THAN_SECONDS = Number(process.env.RECOUNT_MIN_AGE_SECONDS ?? '60');

/**
 * The count-repair worker, run on a schedule (EventBridge in AWS, a timer in `npm start`): recounts
 * every list block whose count update failed or was retried (RECOUNT entries, counter.ts), so list
 * totals and pages become exact again without an operator.
 */
export const handler = middy()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async () => {
    const recounts = await repairMarkedCounts(functionTable, { olderThanSeconds: OLDER_THAN_SECONDS });
    const corrected = recounts.filter(({ before, after }) => before !== after);
    if (corrected.length > 0) logger.warn('Corrected list counts', { corrected });
    return { recounted: recounts.length, corrected: corrected.length };
  });
