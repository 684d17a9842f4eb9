import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { sqs } from './sqs-client';

/** SQS takes at most 10 messages per batch. */
const SQS_BATCH = 10;

export type OutgoingMessage = { body: string; delaySeconds?: number };

/**
 * Sends messages to a queue, 10 per SendMessageBatch, all batches at once; returns for each
 * message whether SQS took it (a refused entry or a failed batch is false: the caller retries it).
 */
export const sendMessages = async (queueUrl: string, messages: readonly OutgoingMessage[]): Promise<boolean[]> => {
  const chunks: OutgoingMessage[][] = [];
  for (let start = 0; start < messages.length; start += SQS_BATCH) chunks.push(messages.slice(start, start + SQS_BATCH));
  const results = await Promise.all(
    chunks.map(async (chunk) => {
      try {
        const result = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((message, index) => ({
              Id: String(index),
              MessageBody: message.body,
              ...(message.delaySeconds === undefined ? {} : { DelaySeconds: message.delaySeconds }),
            })),
          }),
        );
        const ok = new Set((result.Successful ?? []).map((entry) => entry.Id));
        return chunk.map((_, index) => ok.has(String(index)));
      } catch {
        return chunk.map(() => false);
      }
    }),
  );
  return results.flat();
};
