import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { asError } from '#shared/errors';
import { logger } from '#shared/logger';

/**
 * An SQS worker's handler (ReportBatchItemFailures): the batch's records are processed at once,
 * each on its own; a record whose processing failed is reported, and so comes back, unless `settle`
 * acknowledges it (true).
 */
export const sqsBatchHandler = (
  processRecord: (record: SQSRecord) => Promise<unknown>,
  settle: (record: SQSRecord, error: Error) => boolean | Promise<boolean>,
) =>
  middy<SQSEvent, SQSBatchResponse>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .handler(async (event) => {
      const results = await Promise.allSettled(event.Records.map(processRecord));
      const acknowledged = await Promise.all(
        event.Records.map((record, index) => {
          const result = results[index];
          return result?.status === 'rejected' ? settle(record, asError(result.reason)) : true;
        }),
      );
      return {
        batchItemFailures: event.Records.filter((_, index) => !acknowledged[index]).map((record) => ({ itemIdentifier: record.messageId })),
      };
    });
