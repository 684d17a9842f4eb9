import type { OrderEventMessage } from '#shared/domain/order-events';
import { requireQueueUrl } from './client';
import { sendMessages } from './send-batch';

export type { OrderEventMessage } from '#shared/domain/order-events';

const ORDERS_QUEUE_URL = requireQueueUrl('orders');

/**
 * Puts order events on the orders queue; returns for each whether SQS took it. A duplicate is
 * harmless: the commission consumer applies each version of an order once.
 */
export const sendOrderEvents = (events: readonly OrderEventMessage[]): Promise<boolean[]> =>
  sendMessages(
    ORDERS_QUEUE_URL,
    events.map((event) => ({ body: JSON.stringify(event) })),
  );
