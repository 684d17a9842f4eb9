import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { functionTable } from '#shared/db/client';
import { errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { readDeliveryMessage, sendDeliveries } from '#shared/queue/webhooks';
import { deliver } from '#shared/webhooks/deliver';
import { targetPolicyFromEnv } from '#shared/webhooks/outbound';
import { deliveryTimeoutMs, scheduleFromEnv } from '#shared/webhooks/schedule';

const settings = {
  db: functionTable,
  policy: targetPolicyFromEnv(),
  timeoutMs: deliveryTimeoutMs(),
  schedule: scheduleFromEnv(),
  requeue: (messages: Parameters<typeof sendDeliveries>[1]) => sendDeliveries(functionTable, messages),
};

/**
 * The webhook deliverer, on the webhooks queue (shared/webhooks/deliver.ts does the work). The
 * messages of a batch are delivered at once; one whose table or queue work failed is reported
 * (ReportBatchItemFailures) and comes back; after 5 receives it goes to the webhooks DLQ (alarmed).
 * A body that is not a delivery is logged and dropped: nothing could ever deliver it.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const failures = await Promise.all(
      event.Records.map(async (record) => {
        try {
          const message = await readDeliveryMessage(functionTable, record.body);
          if (!message) {
            logger.error('Not a webhook delivery message; dropped', { message_id: record.messageId });
            return [];
          }
          const outcome = await deliver(message, settings);
          logger.info('Webhook delivery', {
            outcome,
            endpoint_uuid: message.endpoint_uuid,
            event_id: message.event.id,
            attempt: message.attempt,
          });
          return [];
        } catch (error) {
          logger.warn('Webhook delivery not carried out; the message comes back', {
            message_id: record.messageId,
            error_name: errorName(error),
          });
          return [{ itemIdentifier: record.messageId }];
        }
      }),
    );
    return { batchItemFailures: failures.flat() };
  });
