import { queryKeyPrefix } from '#shared/db/query';
import { type TableRef, TTL_ATTRIBUTE } from '#shared/db/table-def';
import { itemKey, type Key, merchantPk } from './base';
import { batchDelete, batchPut } from './batch';
import { RETENTION_DAYS } from './webhook-delivery';

/** A delivery parked, as its queue message, while its endpoint is held back (docs/webhooks.md#how-it-works). */
const prefix = (endpointUuid: string) => `WHWAIT#${endpointUuid}#`;

/** One delivery to park: the queue message as JSON, and the time it is filed under. */
type Park = { eventId: string; message: string; at: number };

export const waitingKeys = (merchantId: string, endpointUuid: string, parks: readonly Park[]): Key[] =>
  parks.map(({ eventId, at }) => itemKey(merchantId, `${prefix(endpointUuid)}${new Date(at).toISOString()}#${eventId}`));

/** Parks deliveries of the endpoint under `keys` (waitingKeys of the same parks; BatchWriteItem, 25 a call). */
export const parkWaitingDeliveries = (db: TableRef, keys: readonly Key[], parks: readonly Park[], now: number) => {
  const expires = Math.floor(now / 1000) + RETENTION_DAYS * 24 * 3600;
  const items = parks.map(({ message }, index) => ({ ...keys[index], type: 'webhook_waiting', message, [TTL_ATTRIBUTE]: expires }));
  return batchPut(db, items);
};

/** Up to `limit` of the endpoint's parked deliveries, oldest first, read consistently (so every park written before the read is in it). */
export const waitingDeliveries = async (db: TableRef, merchantId: string, endpointUuid: string, limit: number) =>
  (await queryKeyPrefix(db, merchantPk(merchantId), prefix(endpointUuid), { ConsistentRead: true }, limit)).map((item) => ({
    key: { pk: String(item.pk), sk: String(item.sk) },
    message: String(item.message),
  }));

export const removeWaitingDeliveries = (db: TableRef, keys: readonly Key[]) => batchDelete(db, keys);

/** How many deliveries are parked for the endpoint (or every endpoint of the merchant), counting up to `limit`: for operators and the soak. */
export const parkedDeliveryCount = async (db: TableRef, merchantId: string, limit: number, endpointUuid?: string): Promise<number> => {
  const parked = endpointUuid === undefined ? 'WHWAIT#' : prefix(endpointUuid);
  return (await queryKeyPrefix(db, merchantPk(merchantId), parked, { ProjectionExpression: 'pk, sk' }, limit)).length;
};
