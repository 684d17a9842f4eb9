import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { functionTable } from '../db/client';
import { merchantIdOf, type Key } from '../db/entities/base';
import { orderKey, orderUuidOf } from '../db/entities/order';
import { clearOutboxEntry, outboxEntries } from '../db/entities/outbox';
import { logger } from '../logger';
import { ORDERS_QUEUE_URL, sqs } from './client';

/**
 * The message every accepted order puts on the orders queue. It names the order; the commission
 * processor reads the order itself, so a late or repeated message never carries stale data.
 */
export type OrderAcceptedMessage = { type: 'order.accepted'; merchant_id: string; order_uuid: string };

export const orderAcceptedMessage = (merchantId: string, orderUuid: string): OrderAcceptedMessage => ({
  type: 'order.accepted',
  merchant_id: merchantId,
  order_uuid: orderUuid,
});

/** Clears the order's outbox entry once the queue has its message. */
const markPublished = (key: Key, abortSignal?: AbortSignal) => clearOutboxEntry(functionTable, key, abortSignal);

/**
 * How long the create request spends, after its commit, on sending and clearing the outbox entry
 * (both together). The order is durable and the relay delivers it anyway, so the client is not
 * kept waiting on a slow or hung queue: a create that had to retry its transaction for the full
 * 8 s contention budget still answers inside its function's 10 s.
 */
export const PUBLISH_BUDGET_MS = 1_500;

/** Settles with the call, or rejects with a TimeoutError once `signal` aborts (even if the call ignores it). */
const withinBudget = <T>(call: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(Object.assign(new Error('gave up: the publish budget is spent'), { name: 'TimeoutError' }));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    call.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });

/**
 * Fast path, right after the order's transaction committed: send, then clear the outbox entry,
 * within PUBLISH_BUDGET_MS. Never throws: a failure or timeout here loses nothing (the entry stays
 * and the relay sends the order later), so it is logged and the create still answers 201.
 * Returns whether the message reached the queue.
 */
export const publishAcceptedOrder = async (merchantId: string, orderUuid: string, budgetMs = PUBLISH_BUDGET_MS): Promise<boolean> => {
  const signal = AbortSignal.timeout(budgetMs);
  try {
    const body = JSON.stringify(orderAcceptedMessage(merchantId, orderUuid));
    await withinBudget(sqs.send(new SendMessageCommand({ QueueUrl: ORDERS_QUEUE_URL, MessageBody: body }), { abortSignal: signal }), signal);
  } catch (error) {
    logger.warn('Orders queue unavailable; the outbox relay will send this order', { order_uuid: orderUuid, error: error as Error });
    return false;
  }
  try {
    await withinBudget(markPublished(orderKey(merchantId, orderUuid), signal), signal);
  } catch (error) {
    logger.warn('Could not clear outbox entry; the relay will send a duplicate the processor ignores', { order_uuid: orderUuid, error: error as Error });
  }
  return true;
};

/**
 * The relay: sends every order whose outbox entry is older than `olderThanSeconds` (so it does not
 * race the fast path) and clears the entries SQS accepted. Bounded per run; returns how many it sent.
 */
export const relayPendingOrders = async ({ olderThanSeconds = 30, maxBatches = 20 } = {}): Promise<number> => {
  let sent = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const pending = await outboxEntries(functionTable, 'OUTBOX', olderThanSeconds, 10);
    if (pending.length === 0) break;
    const entries = pending.map((key, index) => ({
      key,
      id: String(index),
      message: orderAcceptedMessage(merchantIdOf(key.pk), orderUuidOf(key)),
    }));
    const result = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: ORDERS_QUEUE_URL,
        Entries: entries.map(({ id, message }) => ({ Id: id, MessageBody: JSON.stringify(message) })),
      }),
    );
    const ok = new Set((result.Successful ?? []).map((entry) => entry.Id));
    await Promise.all(entries.filter((entry) => ok.has(entry.id)).map((entry) => markPublished(entry.key)));
    sent += ok.size;
    if (ok.size < entries.length) break; // the queue is refusing some: try again on the next run
  }
  return sent;
};
