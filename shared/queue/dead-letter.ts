import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqs } from './sqs-client';

/** SQS caps a message attribute's value far higher; a reason is a sentence, kept short. */
const MAX_REASON_LENGTH = 1_000;

/** Puts a message that can never succeed on a dead-letter queue at once, with why; throws when SQS refuses. */
export const sendToDeadLetterQueue = async (
  queueUrl: string,
  message: { body: string; id: string; receiveCount?: string },
  error: Error,
  source: string,
) => {
  const attribute = (value: string) => ({ DataType: 'String', StringValue: value.slice(0, MAX_REASON_LENGTH) });
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: message.body,
      MessageAttributes: {
        dead_letter_reason: attribute(error.message),
        dead_letter_error: attribute(error.name),
        dead_letter_source: attribute(source),
        original_message_id: attribute(message.id),
        original_receive_count: attribute(message.receiveCount ?? '1'),
      },
    }),
  );
};
