import type { OrderEventMessage } from '#shared/domain/order-events';
import { requireQueueUrl } from './client';
import { encodeMessage, sendMessages } from './send-batch';

const ORDERS_QUEUE_URL = requireQueueUrl('orders');

/** Puts order events on the orders queue without their `data` (the consumer reads the order); for each, whether SQS took it. */
export const sendOrderEvents = (events: readonly OrderEventMessage[]): Promise<boolean[]> =>
  sendMessages(
    ORDERS_QUEUE_URL,
    events.map(({ data: _data, ...event }) => ({ body: encodeMessage(event), group: event.merchant_id })),
  );
