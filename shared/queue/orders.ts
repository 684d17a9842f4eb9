import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { functionTable } from '#shared/db/client';
import { merchantIdOf } from '#shared/db/entities/base';
import { type CountChange, markCountsForRecount } from '#shared/db/entities/counter';
import { getOrder, markOrderPublished, type OrderItem, orderCountChange, orderUuidOf } from '#shared/db/entities/order';
import { outboxEntries } from '#shared/db/entities/outbox';
import { type OrderEventMessage, orderEventMessage, unpublishedVersions } from '#shared/domain/order-events';
import { asError } from '#shared/errors';
import { logger } from '#shared/logger';
import { ORDERS_QUEUE_URL, sqs } from './client';

export { type OrderEventMessage, orderEventMessage } from '#shared/domain/order-events';

/**
 * How long a request spends, after its commit, on sending its order's events and marking them
 * published (all together). The order is durable and the relay delivers it anyway, so the client
 * is not kept waiting on a slow or hung queue: a create that had to retry its transaction for the
 * full 8 s contention budget still answers inside its function's 10 s.
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

type PublishableOrder = Pick<OrderItem, 'uuid' | 'version' | 'published_version' | 'cancelled_at'>;

/**
 * Fast path, right after the write that changed the order (create, PATCH, cancel), with the order
 * as that write left it: sends one message per version not yet published, in order, then marks
 * them published (only upward), within PUBLISH_BUDGET_MS. Never throws: a failure or timeout here
 * loses nothing (the outbox entry stays and the relay sends the events later), so it is logged and
 * the request still succeeds. Returns whether every message reached the queue.
 */
export const publishOrderEvents = async (merchantId: string, order: PublishableOrder, budgetMs = PUBLISH_BUDGET_MS): Promise<boolean> => {
  const versions = unpublishedVersions(order);
  const last = versions.at(-1);
  if (last === undefined) return true;
  const signal = AbortSignal.timeout(budgetMs);
  try {
    for (const version of versions) {
      const body = JSON.stringify(orderEventMessage(merchantId, order.uuid, order, version));
      await withinBudget(
        sqs.send(new SendMessageCommand({ QueueUrl: ORDERS_QUEUE_URL, MessageBody: body }), { abortSignal: signal }),
        signal,
      );
    }
  } catch (error) {
    logger.warn('Orders queue unavailable; the outbox relay will send this order event', { order_uuid: order.uuid, error: asError(error) });
    return false;
  }
  try {
    await withinBudget(markOrderPublished(functionTable, merchantId, order.uuid, last, signal), signal);
  } catch (error) {
    logger.warn('Could not mark the order event published; the relay will send a duplicate the processor ignores', {
      order_uuid: order.uuid,
      error: asError(error),
    });
  }
  return true;
};

/**
 * An order whose first event was never published belongs to a create that did not finish: the
 * queue refused, or the function stopped after its commit, perhaps before counting it. Which one is
 * unknown, so its list block is marked for an exact recount (count-repair.ts). A failed mark is
 * logged; the relay goes on.
 */
const markUncountedCreates = async (orders: readonly { merchantId: string; order: OrderItem | undefined }[]) => {
  const changes = new Map<string, CountChange[]>();
  for (const { merchantId, order } of orders) {
    if (order?.published_version === 0) changes.set(merchantId, [...(changes.get(merchantId) ?? []), orderCountChange(order)]);
  }
  const marks = [...changes].map(([merchantId, counted]) => markCountsForRecount(functionTable, merchantId, counted));
  for (const result of await Promise.allSettled(marks)) {
    if (result.status === 'rejected') logger.warn('Could not mark an unfinished create for recount', { error: asError(result.reason) });
  }
};

/** SQS takes at most 10 messages per batch. */
const SQS_BATCH = 10;

type Pending = { merchantId: string; uuid: string; message: OrderEventMessage };

/**
 * The relay: for every order whose outbox entry is older than `olderThanSeconds` (so it does not
 * race the fast path), reads the order (consistent) and sends one message per version not yet
 * published; then marks, per order, the versions up to the first one SQS refused as published
 * (only upward: the entry is removed when that is the order's current version). Bounded per run;
 * returns how many messages it sent.
 */
export const relayPendingOrders = async ({ olderThanSeconds = 30, maxBatches = 20 } = {}): Promise<number> => {
  let sent = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const keys = await outboxEntries(functionTable, 'OUTBOX', olderThanSeconds, SQS_BATCH);
    if (keys.length === 0) break;
    const orders = await Promise.all(
      keys.map(async (key) => {
        const merchantId = merchantIdOf(key.pk);
        const uuid = orderUuidOf(key);
        return { merchantId, uuid, order: await getOrder(functionTable, merchantId, uuid, true) };
      }),
    );
    await markUncountedCreates(orders);
    const pending: Pending[] = orders.flatMap(({ merchantId, uuid, order }) =>
      order
        ? unpublishedVersions(order).map((version) => ({ merchantId, uuid, message: orderEventMessage(merchantId, uuid, order, version) }))
        : [],
    );
    const idOf = (entry: { merchantId: string; uuid: string }) => `${entry.merchantId}/${entry.uuid}`;
    const refused = new Set<string>();
    // Per order, the highest version of the prefix SQS took; an order with nothing left to send
    // (already published meanwhile) is settled at its current version, which removes its entry.
    const publishedUpTo = new Map<string, { merchantId: string; uuid: string; version: number }>();
    for (const { merchantId, uuid, order } of orders) {
      if (order && unpublishedVersions(order).length === 0)
        publishedUpTo.set(idOf({ merchantId, uuid }), { merchantId, uuid, version: order.version ?? 1 });
    }
    for (let start = 0; start < pending.length; start += SQS_BATCH) {
      const chunk = pending.slice(start, start + SQS_BATCH).filter((entry) => !refused.has(idOf(entry)));
      if (chunk.length === 0) continue;
      const result = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: ORDERS_QUEUE_URL,
          Entries: chunk.map((entry, index) => ({ Id: String(index), MessageBody: JSON.stringify(entry.message) })),
        }),
      );
      const ok = new Set((result.Successful ?? []).map((entry) => entry.Id));
      chunk.forEach((entry, index) => {
        if (!ok.has(String(index))) refused.add(idOf(entry));
        else if (!refused.has(idOf(entry)))
          publishedUpTo.set(idOf(entry), { merchantId: entry.merchantId, uuid: entry.uuid, version: entry.message.version });
      });
      sent += ok.size;
    }
    await Promise.all(
      [...publishedUpTo.values()].map(({ merchantId, uuid, version }) => markOrderPublished(functionTable, merchantId, uuid, version)),
    );
    if (refused.size > 0) break; // the queue is refusing some: try again on the next run
  }
  return sent;
};
