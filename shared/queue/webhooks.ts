import type { SQSClient } from '@aws-sdk/client-sqs';
import { loadPayload, type PayloadRef, storePayload } from '#shared/db/entities/message-payload';
import { onSlowLane, type WebhookEndpointItem } from '#shared/db/entities/webhook-endpoint';
import type { TableRef } from '#shared/db/table-def';
import { groupBy } from '#shared/group-by';
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, type WebhookEvent, type WebhookEventType } from '#shared/webhooks/events';
import { lazyQueueUrl } from './client';
import { readMessageBody } from './large-bodies';
import { bodyBytes, delaySecondsUntil, encodeMessage, MAX_BATCH_BYTES, sendMessages } from './send-batch';

/** One delivery attempt of one event to one endpoint; a wait longer than SQS's 15 minutes is carried by `not_before`. */
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
  /** Sent on the slow lane (its endpoint not known to answer promptly: webhook-endpoint.ts onSlowLane). */
  slow?: true;
  /** Where an event too large to travel inline is stored; kept once read, so a retry sends the reference again. */
  event_ref?: PayloadRef;
};

/** Puts delivery messages on the webhooks queue; for each, whether SQS took it. */
export type SendDeliveries = (messages: DeliveryMessage[]) => Promise<boolean[]>;

/** The lane of endpoints that answer and the slow lane. */
const webhooksQueueUrl = lazyQueueUrl('webhooks');
const slowLaneQueueUrl = lazyQueueUrl('webhooks-slow');

/** The message on the lane of its endpoint as `endpoint` shows it. */
export const onLaneOf = (message: DeliveryMessage, endpoint: Pick<WebhookEndpointItem, 'fast_at' | 'slow_at'>): DeliveryMessage => {
  const { slow: _slow, ...rest } = message;
  return onSlowLane(endpoint) ? { ...rest, slow: true } : rest;
};

/** The body of a delivery message: with its event, or, when that is stored (`event_ref`), with the reference instead. */
const deliveryBody = (message: DeliveryMessage) => {
  if (!message.event_ref) return encodeMessage(message);
  const { event: _stored, ...reference } = message;
  return encodeMessage(reference);
};

/** A delivery message as a queue message with `body`, delayed until its `not_before` (at most 15 minutes). */
const queueMessage = (message: DeliveryMessage, body: string, now: number) => ({
  body,
  delaySeconds: delaySecondsUntil(message.not_before, 0, now),
  group: message.merchant_id,
});

/** Delivery messages as queue messages, an event too large to travel inline stored once (undefined: it could not be). */
const queueMessages = (store: TableRef, messages: readonly DeliveryMessage[], now = Date.now()) => {
  const stored = new Map<string, Promise<PayloadRef>>();
  return Promise.all(
    messages.map(async (message) => {
      const body = deliveryBody(message);
      if (message.event_ref || bodyBytes(body) <= MAX_BATCH_BYTES) return queueMessage(message, body, now);
      const json = JSON.stringify(message.event);
      const key = `${message.merchant_id} ${json}`;
      if (!stored.has(key)) stored.set(key, storePayload(store, message.merchant_id, json));
      try {
        const referenced = { ...message, event_ref: await (stored.get(key) as Promise<PayloadRef>) };
        return queueMessage(referenced, deliveryBody(referenced), now);
      } catch {
        return undefined;
      }
    }),
  );
};

/** Sends delivery messages to the webhooks queue of their lane (or all to `target`); for each, whether SQS took it. */
export const sendDeliveries = async (
  store: TableRef,
  messages: readonly DeliveryMessage[],
  target?: { queueUrl: string; client: SQSClient },
): Promise<boolean[]> => {
  const prepared = await queueMessages(store, messages);
  const result = messages.map(() => false);
  const sendable = prepared.flatMap((message, index) => (message === undefined ? [] : [{ message, index }]));
  await Promise.all(
    [...groupBy(sendable, ({ index }) => messages[index]?.slow === true)].map(async ([slow, lane]) => {
      const queueUrl = target?.queueUrl ?? (slow ? slowLaneQueueUrl() : webhooksQueueUrl());
      const sent = await sendMessages(
        queueUrl,
        lane.map(({ message }) => message),
        target?.client,
      );
      lane.forEach(({ index }, position) => {
        result[index] = sent[position] === true;
      });
    }),
  );
  return result;
};

const EVENT_TYPES: readonly string[] = [...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE];

const isPayloadRef = (value: unknown, merchantId: string): value is PayloadRef => {
  const ref = value as Partial<PayloadRef> | undefined;
  return ref?.merchant_id === merchantId && typeof ref.sha256 === 'string' && typeof ref.bytes === 'number';
};

const parsed = (body: string): Partial<DeliveryMessage> | null | undefined => {
  try {
    return JSON.parse(body) as Partial<DeliveryMessage> | null;
  } catch {
    return undefined;
  }
};

/** The delivery a received body carries, its event (or older messages' whole body) read back when stored; throws when unreadable. */
export const readDeliveryMessage = async (store: TableRef, body: string): Promise<DeliveryMessage | undefined> => {
  const value = parsed(await readMessageBody(store, body));
  if (value?.event === undefined && isPayloadRef(value?.event_ref, String(value?.merchant_id)))
    value.event = JSON.parse(await loadPayload(store, value.event_ref)) as WebhookEvent;
  return deliveryOf(value);
};

export const parseDeliveryMessage = (body: string): DeliveryMessage | undefined => deliveryOf(parsed(body));

const deliveryOf = (value: Partial<DeliveryMessage> | null | undefined): DeliveryMessage | undefined => {
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
    ...(value.slow === true ? { slow: true } : {}),
    ...(isPayloadRef(value.event_ref, value.merchant_id) ? { event_ref: value.event_ref } : {}),
  };
};
