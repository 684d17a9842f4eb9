import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { logger } from '#shared/logger';
import { sqs } from './sqs-client';

/** SQS delays a message by at most 15 minutes; a later one is re-sent when it arrives early. */
const MAX_DELAY_SECONDS = 900;

/** The delay of a message due at `due` (undefined: now), at least `minSeconds`, within SQS's bounds. */
export const delaySecondsUntil = (due: string | undefined, minSeconds = 0, now = Date.now()): number =>
  Math.min(MAX_DELAY_SECONDS, Math.max(minSeconds, due === undefined ? 0 : Math.ceil((Date.parse(due) - now) / 1000)));

/** SQS takes at most 10 messages per batch. */
const SQS_BATCH = 10;
/** A batch's bodies stay within 256 KiB (older queues' limit) with room for attributes; a larger body travels by reference. */
export const MAX_BATCH_BYTES = 250 * 1024;

/** Characters SQS accepts in a body are XML 1.0's; the emulator also refuses those from U+10000 up. */
const NOT_SQS_SAFE = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd]/g;

/** A value as a message body: JSON with every character SQS could refuse as a `\uXXXX` escape, which JSON.parse reads back unchanged. */
export const encodeMessage = (value: unknown): string =>
  JSON.stringify(value).replace(NOT_SQS_SAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** `group`: the merchant, as MessageGroupId: on a standard queue SQS is then fair, so one merchant's backlog holds up no other's. */
export type OutgoingMessage = { body: string; delaySeconds?: number; group?: string };

export const bodyBytes = (body: string) => Buffer.byteLength(body, 'utf8');

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

/** Sends messages in batches bounded by count and bytes; for each, whether SQS took it (a body over MAX_BATCH_BYTES never is). */
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

/** Sends several lists of messages in one go; a list is done when every one of its messages was taken. */
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
