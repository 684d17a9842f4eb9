import { loadPayload, type PayloadRef, storePayload } from '#shared/db/entities/message-payload';
import type { TableRef } from '#shared/db/table-def';
import { bodyBytes, encodeMessage, MAX_BATCH_BYTES, type OutgoingMessage } from './send-batch';

/** What a message carries instead of a body over MAX_BATCH_BYTES. */
type PayloadMessage = { payload_ref: PayloadRef };

/** `merchantId`: whose table space holds the body if it is too large to travel inline. */
export type MerchantMessage = OutgoingMessage & { merchantId: string };

/** The body to send: itself, or a reference to it, stored in `store`, when it is too large for a message. */
export const inlineOrReference = async (store: TableRef, message: { body: string; merchantId?: string | undefined }): Promise<string> => {
  if (bodyBytes(message.body) <= MAX_BATCH_BYTES) return message.body;
  if (message.merchantId === undefined) throw new Error('Message body too large, and no merchant to store it for');
  const reference: PayloadMessage = { payload_ref: await storePayload(store, message.merchantId, message.body) };
  return encodeMessage(reference);
};

/** The messages with every large body stored and replaced by its reference; a message whose body could not be stored is undefined. */
export const withLargeBodiesStored = (store: TableRef, messages: readonly MerchantMessage[]): Promise<(OutgoingMessage | undefined)[]> =>
  Promise.all(
    messages.map(async ({ merchantId, ...message }) => {
      try {
        return { ...message, body: await inlineOrReference(store, { body: message.body, merchantId }) };
      } catch {
        return undefined;
      }
    }),
  );

/** A received body as it was sent: itself, or the stored body its reference stands for. */
export const readMessageBody = async (store: TableRef, body: string): Promise<string> => {
  if (!body.startsWith('{"payload_ref":')) return body;
  const { payload_ref: ref } = JSON.parse(body) as PayloadMessage;
  return loadPayload(store, ref);
};
