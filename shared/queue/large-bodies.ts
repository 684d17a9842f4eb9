import { loadPayload, type PayloadRef, storePayload } from '#shared/db/entities/message-payload';
import type { TableRef } from '#shared/db/table-def';
import { bodyBytes, encodeMessage, MAX_BATCH_BYTES } from './send-batch';

/** What a message carries instead of a body over MAX_BATCH_BYTES. */
type PayloadMessage = { payload_ref: PayloadRef };

/** The body to send: itself, or a reference to it, stored in `store`, when it is too large for a message. */
export const inlineOrReference = async (store: TableRef, message: { body: string; merchantId?: string | undefined }): Promise<string> => {
  if (bodyBytes(message.body) <= MAX_BATCH_BYTES) return message.body;
  if (message.merchantId === undefined) throw new Error('Message body too large, and no merchant to store it for');
  const reference: PayloadMessage = { payload_ref: await storePayload(store, message.merchantId, message.body) };
  return encodeMessage(reference);
};

/** A received body as it was sent: itself, or the stored body its reference stands for. */
export const readMessageBody = async (store: TableRef, body: string): Promise<string> => {
  if (!body.startsWith('{"payload_ref":')) return body;
  const { payload_ref: ref } = JSON.parse(body) as PayloadMessage;
  return loadPayload(store, ref);
};
