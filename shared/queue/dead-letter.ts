import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { requireEnv } from '#shared/config';
import { sqs } from './sqs-client';

/** The orders queue's dead-letter queue, for the consumer. Read at init: fail fast. */
export const ORDERS_DLQ_URL = requireEnv('ORDERS_DLQ_URL');

/** SQS caps a message attribute's value far higher; a reason is a sentence, kept short. */
const MAX_REASON_LENGTH = 1_000;

/**
 * Puts a message that can never succeed on the dead-letter queue at once, instead of letting it
 * burn its receives first: same body, plus why (`dead_letter_reason`), which error, which message
 * it was and from which function. The caller then acknowledges the original. Throws when SQS
 * refuses: the caller must then report the original as failed, so nothing is lost.
 */
export const sendToDeadLetterQueue = async (record: SQSRecord, reason: { error: string; message: string; source: string }) => {
  const attribute = (value: string) => ({ DataType: 'String', StringValue: value.slice(0, MAX_REASON_LENGTH) });
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: ORDERS_DLQ_URL,
      MessageBody: record.body,
      MessageAttributes: {
        dead_letter_reason: attribute(reason.message),
        dead_letter_error: attribute(reason.error),
        dead_letter_source: attribute(reason.source),
        original_message_id: attribute(record.messageId),
        original_receive_count: attribute(record.attributes?.ApproximateReceiveCount ?? '1'),
      },
    }),
  );
};
