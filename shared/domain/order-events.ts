import * as z from 'zod/mini';
import type { OrderItem } from '#shared/db/entities/order';
import { toOrderResponse } from './order-model';

/** The change feed's order events, one per order `version`, whose kind is not stored (docs/architecture.md#the-change-feed). */
export const ORDER_EVENT_TYPES = ['order.created', 'order.updated', 'order.cancelled'] as const;
type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

/** One change, as the feed publishes it to webhooks and the commission consumer (which reads the order itself). */
export type OrderEventMessage = {
  id: string;
  type: OrderEventType;
  timestamp: string;
  merchant_id: string;
  order_uuid: string;
  version: number;
  data: { order: ReturnType<typeof toOrderResponse> };
};

/** What the versioning needs of an order (a stored order without `version` predates it: version 1). */
type VersionedOrder = { version?: number | undefined; cancelled_at?: string | undefined };

export const versionOf = (order: VersionedOrder): number => order.version ?? 1;

/** The kind of change that made `version` of this order. */
export const eventTypeOf = (order: VersionedOrder, version: number): OrderEventType => {
  if (version <= 1) return 'order.created';
  if (order.cancelled_at !== undefined && version === versionOf(order)) return 'order.cancelled';
  return 'order.updated';
};

/** The event of an order's current version (the order as that version left it). */
export const orderEventMessage = (merchantId: string, order: OrderItem): OrderEventMessage => {
  const version = versionOf(order);
  return {
    id: `evt_${order.uuid}_v${version}`,
    type: eventTypeOf(order, version),
    timestamp: order.updated_at,
    merchant_id: merchantId,
    order_uuid: order.uuid,
    version,
    data: { order: toOrderResponse(order) },
  };
};

/** The names the first order events had: a message queued under them (a DLQ redrive) is still read. */
const FORMER_TYPE_NAMES = new Map<string, OrderEventType>([
  ['order.accepted', 'order.created'],
  ['order.shipping_updated', 'order.updated'],
]);

const orderEventBody = z.object({
  type: z.string(),
  merchant_id: z.string().check(z.minLength(1)),
  order_uuid: z.string().check(z.minLength(1)),
  version: z.optional(z.int().check(z.minimum(1))),
});

/** What the commission consumer needs of a queue message; `version` is optional, as in a message older than versions. */
export const parseOrderEvent = (body: string) => {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = z.safeParse(orderEventBody, value);
  if (!parsed.success) return undefined;
  const type = ORDER_EVENT_TYPES.find((known) => known === parsed.data.type) ?? FORMER_TYPE_NAMES.get(parsed.data.type);
  return type === undefined ? undefined : { ...parsed.data, type };
};
