import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { asError } from '#shared/errors';
import { logger } from '#shared/logger';
import { withBatchedMetrics } from '#shared/metrics';

/** How long before the function's timeout a batch publishes the metrics it holds. */
const METRICS_MARGIN_MS = 500;

/** An SQS worker's handler: records processed at once, a failed one back unless `settle` acknowledges it; metrics out before timeout. */
export const sqsBatchHandler = <T>(
  processRecord: (record: SQSRecord) => Promise<T>,
  settle: (record: SQSRecord, error: Error) => boolean | Promise<boolean>,
  summarize?: (processed: T[]) => void,
) =>
  middy<SQSEvent, SQSBatchResponse>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .handler((event, context) =>
      withBatchedMetrics(
        async () => {
          const results = await Promise.allSettled(event.Records.map(processRecord));
          summarize?.(results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])));
          const acknowledged = await Promise.all(
            event.Records.map((record, index) => {
              const result = results[index];
              return result?.status === 'rejected' ? settle(record, asError(result.reason)) : true;
            }),
          );
          return {
            batchItemFailures: event.Records.filter((_, index) => !acknowledged[index]).map((record) => ({
              itemIdentifier: record.messageId,
            })),
          };
        },
        Date.now() + context.getRemainingTimeInMillis() - METRICS_MARGIN_MS,
      ),
    );
