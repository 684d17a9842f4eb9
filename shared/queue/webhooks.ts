import type { SQSClient } from '@aws-sdk/client-sqs';
import type { TableRef } from '#shared/db/table-def';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEventType } from '#shared/webhooks/events';
import { lazyQueueUrl } from './client';
import { withLargeBodiesStored } from './large-bodies';
import { encodeMessage, MAX_DELAY_SECONDS, sendMessages } from './send-batch';

/**
 * One delivery attempt of one event to one endpoint, on the stage's webhooks queue. A retry is a
 * new message delayed until it is due; a wait longer than SQS's 15 minutes is carried by
 * `not_before` (the deliverer sends it on again, delayed, until then): no polling loop.
 */
export type DeliveryMessage = {
  merchant_id: string;
  endpoint_uuid: string;
  event: WebhookEvent;
  /** 1 for the first try (and for a resend or a recovery, which start afresh). */
  attempt: number;
  not_before?: string;
  /** How many times this attempt found all the endpoint's deliveries in flight: its next wait doubles each time. */
  holds?: number;
  /** Not a delivery: a wake-up that releases the endpoint's parked deliveries once its hold has passed (shared/webhooks/deliver.ts). */
  wake?: true;
  /** Of a wake-up: it keeps coming back while deliveries are parked (the first park of a backlog leaves one). */
  keep?: true;
};

/** The function's webhooks queue (only the senders have it). */
const webhooksQueueUrl = lazyQueueUrl('webhooks');

/** Delivery messages as queue messages, each delayed until its `not_before` (at most 15 minutes); a large event travels by reference. */
export const deliveryMessages = (messages: readonly DeliveryMessage[], now = Date.now()) =>
  messages.map((message) => {
    const wait = message.not_before === undefined ? 0 : Math.ceil((Date.parse(message.not_before) - now) / 1000);
    return {
      body: encodeMessage(message),
      delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, wait)),
      merchantId: message.merchant_id,
      group: message.merchant_id,
    };
  });

/**
 * Sends delivery messages (see `deliveryMessages`) to the webhooks queue (the function's, unless
 * `target` names another), storing large events in `store`; for each, whether SQS took it.
 */
export const sendDeliveries = async (
  store: TableRef,
  messages: readonly DeliveryMessage[],
  target?: { queueUrl: string; client: SQSClient },
): Promise<boolean[]> => {
  const prepared = await withLargeBodiesStored(store, deliveryMessages(messages));
  const sendable = prepared.flatMap((message, index) => (message === undefined ? [] : [{ message, index }]));
  const sent = await sendMessages(
    target?.queueUrl ?? webhooksQueueUrl(),
    sendable.map(({ message }) => message),
    target?.client,
  );
  const result = messages.map(() => false);
  sendable.forEach(({ index }, position) => {
    result[index] = sent[position] === true;
  });
  return result;
};

const EVENT_TYPES: readonly string[] = [...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE];

/** The delivery a message carries, or undefined when the body is not one. */
export const parseDeliveryMessage = (body: string): DeliveryMessage | undefined => {
  let value: Partial<DeliveryMessage> | null;
  try {
    value = JSON.parse(body) as Partial<DeliveryMessage> | null;
  } catch {
    return undefined;
  }
  const event = value?.event;
  if (typeof value?.merchant_id !== 'string' || typeof value.endpoint_uuid !== 'string') return undefined;
  if (typeof value.attempt !== 'number' || !Number.isSafeInteger(value.attempt) || value.attempt < 1) return undefined;
  if (typeof event?.id !== 'string' || !EVENT_TYPES.includes(event.type as string) || typeof event.timestamp !== 'string') return undefined;
  if (typeof event.data !== 'object' || event.data === null) return undefined;
  return {
    merchant_id: value.merchant_id,
    endpoint_uuid: value.endpoint_uuid,
    event: { id: event.id, type: event.type as WebhookEventType, timestamp: event.timestamp, data: event.data },
    attempt: value.attempt,
    ...(typeof value.not_before === 'string' ? { not_before: value.not_before } : {}),
    ...(typeof value.holds === 'number' && Number.isSafeInteger(value.holds) && value.holds > 0 ? { holds: value.holds } : {}),
    ...(value.wake === true ? { wake: true } : {}),
    ...(value.keep === true ? { keep: true } : {}),
  };
};
