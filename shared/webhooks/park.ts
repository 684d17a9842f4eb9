import { noteParkedDeliveries } from '#shared/db/entities/webhook-endpoint';
import { parkWaitingDeliveries, removeWaitingDeliveries, waitingKeys } from '#shared/db/entities/webhook-waiting';
import type { TableRef } from '#shared/db/table-def';
import type { DeliveryMessage } from '#shared/queue/webhooks';

/** Parks deliveries while the endpoint's hold stands, noted on it: undefined when the hold ended, else whether they began its backlog. */
export const parkWhileHeld = async (
  db: TableRef,
  merchantId: string,
  endpointUuid: string,
  parks: readonly { message: DeliveryMessage; at: number }[],
  now: number,
): Promise<{ first: boolean } | undefined> => {
  const waiting = parks.map(({ message: { not_before: _notBefore, holds: _holds, ...parked }, at }) => ({
    eventId: parked.event.id,
    message: JSON.stringify(parked),
    at,
  }));
  const keys = waitingKeys(merchantId, endpointUuid, waiting);
  let noted: { first: boolean } | undefined;
  try {
    await parkWaitingDeliveries(db, keys, waiting, now);
    noted = await noteParkedDeliveries(db, merchantId, endpointUuid, new Date(now).toISOString(), parks.length);
  } catch (error) {
    // Not noted, the parks would wait for a later backlog's release: taken back as far as the table lets us.
    await removeWaitingDeliveries(db, keys).catch(() => undefined);
    throw error;
  }
  if (!noted) await removeWaitingDeliveries(db, keys);
  return noted;
};

/** The keeper of an endpoint's backlog, left by its first park: a wake-up that comes back while anything is parked. */
export const keeper = ({ not_before: _notBefore, holds: _holds, ...message }: DeliveryMessage, heldUntil: number): DeliveryMessage => ({
  ...message,
  wake: true,
  keep: true,
  not_before: new Date(heldUntil).toISOString(),
});
