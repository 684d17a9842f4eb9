import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { logger } from '#shared/logger';
import { sqs } from './sqs-client';

/** SQS delays a message by at most 15 minutes; a later one is re-sent when it arrives early. */
export const MAX_DELAY_SECONDS = 900;

/** SQS takes at most 10 messages per batch. */
const SQS_BATCH = 10;
/**
 * A batch's bodies together, and so any one body, stay within 256 KiB: SQS's limit on queues made
 * before it allowed 1 MiB, with room for the message attributes. A larger body travels by reference.
 */
export const MAX_BATCH_BYTES = 250 * 1024;

/** Characters SQS accepts in a body (XML 1.0's): tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD and U+10000 up; the emulator refuses the last range too. */
const NOT_SQS_SAFE = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd]/g;

/**
 * A value as a message body: JSON in which every character SQS (or its emulator) could refuse is
 * written as a `\uXXXX` escape (U+FFFE, U+FFFF and each half of a character outside the BMP), so
 * any text the API accepts can travel; JSON.parse reads it back unchanged.
 */
export const encodeMessage = (value: unknown): string =>
  JSON.stringify(value).replace(NOT_SQS_SAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * `group`: the merchant the message is for, sent as its MessageGroupId: on a standard queue that
 * makes SQS a fair queue, so one merchant's backlog does not hold up the others' messages.
 */
export type OutgoingMessage = { body: string; delaySeconds?: number; group?: string };

export const bodyBytes = (body: string) => Buffer.byteLength(body, 'utf8');

/** Groups messages into batches of at most 10 and MAX_BATCH_BYTES, in order. */
const batches = <T extends { body: string }>(messages: readonly T[]): T[][] => {
  const result: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = bodyBytes(message.body);
    if (current.length === SQS_BATCH || (current.length > 0 && bytes + size > MAX_BATCH_BYTES)) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) result.push(current);
  return result;
};

/**
 * Sends messages to a queue in batches bounded by count and bytes, all batches at once; returns
 * for each message whether SQS took it (a refused entry, a failed batch or a body over
 * MAX_BATCH_BYTES is false: the caller retries it, or parks what keeps failing; large-bodies.ts
 * makes a large body travel by reference). `client`: the functions' by default; the operator tools pass their own.
 */
export const sendMessages = async (queueUrl: string, messages: readonly OutgoingMessage[], client: SQSClient = sqs): Promise<boolean[]> => {
  const ready = messages.flatMap((message, index) => {
    if (bodyBytes(message.body) <= MAX_BATCH_BYTES) return [{ ...message, index }];
    logger.error('Message body too large for SQS; not sent', { bytes: bodyBytes(message.body) });
    return [];
  });
  const sent = messages.map(() => false);
  await Promise.all(
    batches(ready).map(async (chunk) => {
      try {
        const result = await client.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((message) => ({
              Id: String(message.index),
              MessageBody: message.body,
              ...(message.delaySeconds === undefined ? {} : { DelaySeconds: message.delaySeconds }),
              ...(message.group === undefined ? {} : { MessageGroupId: message.group }),
            })),
          }),
        );
        for (const entry of result.Successful ?? []) sent[Number(entry.Id)] = true;
        for (const entry of result.Failed ?? [])
          logger.warn('SQS refused a message', { code: entry.Code, sender_fault: entry.SenderFault });
      } catch {
        // The whole batch failed (throttled, unreachable): its messages stay unsent, for the caller to retry.
      }
    }),
  );
  return sent;
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
