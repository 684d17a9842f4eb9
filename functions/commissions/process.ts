import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { parseOrderAccepted, recordOrderCommission, UnprocessableMessageError } from '../../shared/domain/commissions';
import { logger } from '../../shared/logger';
import { countMetric, emitMetrics, METRIC } from '../../shared/metrics';

/**
 * The commission consumer on the orders queue (SQS event source with ReportBatchItemFailures in
 * AWS, local/sqs-poller.ts in `npm start`). Each message is processed on its own; the ones that
 * fail are reported, so SQS redelivers only those (and moves them to the DLQ after 5 receives).
 * Processing is idempotent: a duplicate message is acknowledged without counting twice.
 */
const processRecord = async (record: SQSRecord) => {
  const message = parseOrderAccepted(record.body);
  if (!message) throw new UnprocessableMessageError('Not an order.accepted message');
  const { outcome, commission } = await recordOrderCommission(message.merchant_id, message.order_uuid);
  if (outcome === 'recorded') {
    countMetric(METRIC.commissionsRecorded);
    emitMetrics({ [METRIC.commissionAmount]: commission.total_amount }, { currency: commission.currency_code });
  }
  logger.info(outcome === 'recorded' ? 'Commission recorded' : 'Duplicate message: commission already recorded', {
    message_id: record.messageId,
    merchant_id: message.merchant_id,
    order_uuid: message.order_uuid,
    total_amount: commission.total_amount,
  });
  return outcome;
};

export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const results = await Promise.allSettled(event.Records.map(processRecord));
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    results.forEach((result, index) => {
      if (result.status === 'fulfilled') return;
      const record = event.Records[index] as SQSRecord;
      const error = result.reason as Error;
      logger.error('Message not processed; SQS will redeliver it', {
        message_id: record.messageId,
        receive_count: record.attributes?.ApproximateReceiveCount,
        error: { name: error.name, message: error.message },
      });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    });
    return { batchItemFailures };
  });
