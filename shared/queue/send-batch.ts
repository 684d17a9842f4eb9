import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sqs } from './sqs-client';

/** SQS delays a message by at most 15 minutes; a later one is re-sent when it arrives early. */
export const MAX_DELAY_SECONDS = 900;

/** SQS takes at most 10 messages per batch. */
const SQS_BATCH = 10;

export type OutgoingMessage = { body: string; delaySeconds?: number };

/**
 * Sends messages to a queue, 10 per SendMessageBatch, all batches at once; returns for each
 * message whether SQS took it (a refused entry or a failed batch is false: the caller retries it).
 * `client`: the functions' by default; the operator tools pass their own.
 */
export const sendMessages = async (queueUrl: string, messages: readonly OutgoingMessage[], client: SQSClient = sqs): Promise<boolean[]> => {
  const chunks: OutgoingMessage[][] = [];
  for (let start = 0; start < messages.length; start += SQS_BATCH) chunks.push(messages.slice(start, start + SQS_BATCH));
  const results = await Promise.all(
    chunks.map(async (chunk) => {
      try {
        const result = await client.send(
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

/**
 * Sends several lists of messages in one go (`send` takes them flat); a list is done when every
 * one of its messages was taken. The change feed sends each record's messages this way.
 */
export const sendLists = async <T>(lists: readonly (readonly T[])[], send: (flat: T[]) => Promise<boolean[]>): Promise<boolean[]> => {
  const sent = await send(lists.flat());
  const done: boolean[] = [];
  let start = 0;
  for (const list of lists) {
    done.push(sent.slice(start, start + list.length).every(Boolean));
    start += list.length;
  }
  return done;
};
