import type { SQSRecord } from 'aws-lambda';
import { functionTable } from '#shared/db/client';
import { errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { sqsBatchHandler } from '#shared/queue/batch-handler';
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

const processRecord = async (record: SQSRecord) => {
  const message = await readDeliveryMessage(functionTable, record.body);
  // Not a delivery: nothing could ever deliver it; logged, acknowledged.
  if (!message) return logger.error('Not a webhook delivery message; dropped', { message_id: record.messageId });
  const outcome = await deliver(message, settings);
  // A delivery is in the endpoint's delivery log; the log line is for what went otherwise.
  const level = outcome === 'delivered' ? 'debug' : 'info';
  logger[level]('Webhook delivery', {
    outcome,
    endpoint_uuid: message.endpoint_uuid,
    event_id: message.event.id,
    attempt: message.attempt,
  });
};

/** The webhook deliverer: a message whose table or queue work failed comes back; after 5 receives it goes to the DLQ. */
export const handler = sqsBatchHandler(processRecord, (record, error) => {
  logger.warn('Webhook delivery not carried out; the message comes back', { message_id: record.messageId, error_name: errorName(error) });
  return false;
});
