/**
 * The order events on the orders queue. Every change of an order increments its `version`
 * (create = 1; PATCH and cancel add 1 in their conditional UpdateItem) and owes one event per
 * version. A message names only the merchant, the order and the version; the commission consumer
 * reads the order itself, so a late, repeated or out-of-order message never carries stale data.
 *
 * The kind of each version follows from the order's rules, so the order need not store it:
 * version 1 is the acceptance; a cancelled order can no longer change, so its last version is the
 * cancellation; every other version is a shipping change (PATCH changes nothing else).
 */
export const ORDER_EVENT_TYPES = ['order.accepted', 'order.shipping_updated', 'order.cancelled'] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

export type OrderEventMessage = { type: OrderEventType; merchant_id: string; order_uuid: string; version: number };

/** What the versioning needs of an order (a stored order without `version` predates it: version 1). */
export type VersionedOrder = { version?: number | undefined; published_version?: number | undefined; cancelled_at?: string | undefined };

export const versionOf = (order: VersionedOrder): number => order.version ?? 1;

/** The kind of change that made `version` of this order. */
export const eventTypeOf = (order: VersionedOrder, version: number): OrderEventType => {
  if (version <= 1) return 'order.accepted';
  if (order.cancelled_at !== undefined && version === versionOf(order)) return 'order.cancelled';
  return 'order.shipping_updated';
};

export const orderEventMessage = (merchantId: string, orderUuid: string, order: VersionedOrder, version: number): OrderEventMessage => ({
  type: eventTypeOf(order, version),
  merchant_id: merchantId,
  order_uuid: orderUuid,
  version,
});

/**
 * The versions whose events are still owed: published_version + 1 .. version. A stored order
 * without `published_version` that is on the outbox has published nothing yet.
 */
export const unpublishedVersions = (order: VersionedOrder): number[] => {
  const versions: number[] = [];
  for (let version = (order.published_version ?? 0) + 1; version <= versionOf(order); version++) versions.push(version);
  return versions;
};

const isOrderEventType = (value: unknown): value is OrderEventType => ORDER_EVENT_TYPES.includes(value as OrderEventType);

/**
 * The queue message, or undefined when the body is not an order event. `version` is optional on
 * input: a message queued before versions existed (a DLQ redrive) still names its order.
 */
export const parseOrderEvent = (body: string): (Omit<OrderEventMessage, 'version'> & { version?: number }) | undefined => {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const message = value as Record<string, unknown>;
  if (!isOrderEventType(message.type)) return undefined;
  if (typeof message.merchant_id !== 'string' || message.merchant_id === '') return undefined;
  if (typeof message.order_uuid !== 'string' || message.order_uuid === '') return undefined;
  const version = message.version;
  if (version !== undefined && !(typeof version === 'number' && Number.isSafeInteger(version) && version >= 1)) return undefined;
  return {
    type: message.type,
    merchant_id: message.merchant_id,
    order_uuid: message.order_uuid,
    ...(version === undefined ? {} : { version }),
  };
};
