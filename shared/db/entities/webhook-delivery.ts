import * as z from 'zod/mini';
import { indexQuery, queryPage, queryPages } from '#shared/db/query';
import { GSI1, GSI3, type TableRef, TTL_ATTRIBUTE } from '#shared/db/table-def';
import { getStored, itemKey, type Key, merchantPk, nullableString, parseStored, updateApplied } from './base';
import { packedJson, packJson, unpackJson } from './packed-json';

/** One event's delivery to one endpoint, listed on gsi1 and, while `failed`, on gsi3 for recovery (docs/webhooks.md#how-it-works). */
export const RETENTION_DAYS = 15;
const RESPONSE_EXCERPT_CHARS = 1024;

/** The first RESPONSE_EXCERPT_CHARS of an answer, never ending in half of a character outside the BMP. */
export const responseExcerpt = (text: string) => {
  const cut = text.slice(0, RESPONSE_EXCERPT_CHARS);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
};

const deliveryKey = (merchantId: string, endpointUuid: string, eventId: string): Key =>
  itemKey(merchantId, `WHDELIVERY#${endpointUuid}#${eventId}`);
const listPk = (merchantId: string, endpointUuid: string) => `${merchantPk(merchantId)}#WEBHOOK_DELIVERIES#${endpointUuid}`;
const failedListPk = (merchantId: string, endpointUuid: string) => `${merchantPk(merchantId)}#WEBHOOK_FAILED#${endpointUuid}`;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const deliverySchema = z.looseObject({
  endpoint_uuid: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  /** The event as sent (eventJsonOf), for resends. */
  event: packedJson,
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number(),
  last_attempt_at: z.string(),
  response_status: z.nullable(z.number()),
  latency_ms: z.nullable(z.number()),
  response_body: nullableString(),
  error: nullableString(),
  next_attempt_at: nullableString(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookDeliveryItem = z.output<typeof deliverySchema>;

const parseDelivery = (raw: unknown): WebhookDeliveryItem => parseStored('webhook delivery', deliverySchema, raw);

export const eventJsonOf = (delivery: Pick<WebhookDeliveryItem, 'event'>): string => unpackJson(delivery.event);

export type AttemptRecord = Pick<
  WebhookDeliveryItem,
  'status' | 'response_status' | 'latency_ms' | 'response_body' | 'error' | 'next_attempt_at'
> & { attempt: number; at: string };

/** The fields of an attempt that got no answer and has no next one (not sent, or disabled). */
const UNANSWERED = { response_status: null, latency_ms: null, response_body: null, next_attempt_at: null } as const;

/** The outcome of a delivery to a disabled endpoint: failed, nothing sent (recover sends it once the endpoint is enabled again). */
export const DISABLED_OUTCOME = { ...UNANSWERED, status: 'failed', error: 'The endpoint is disabled' } as const;

/** Records an attempt, creating the delivery on its first, in one UpdateItem; a failed one enters the failed list, any other leaves it. */
export const recordWebhookDelivery = async (
  db: TableRef,
  merchantId: string,
  endpointUuid: string,
  event: { id: string; type: string; json: string },
  attempt: AttemptRecord,
  { onlyNew = false, keepSucceeded = false } = {},
) => {
  const expires = Math.floor(Date.parse(attempt.at) / 1000) + RETENTION_DAYS * 24 * 3600;
  const failed = attempt.status === 'failed';
  await updateApplied(db, {
    Key: deliveryKey(merchantId, endpointUuid, event.id),
    ...(onlyNew ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
    ...(keepSucceeded ? { ConditionExpression: 'attribute_not_exists(pk) OR #status <> :succeeded' } : {}),
    UpdateExpression:
      [
        'SET #type = :type, endpoint_uuid = :ep, event_id = :id, event_type = :eventType, event = :event',
        'created_at = if_not_exists(created_at, :at), #gsiPk = :gsiPk, #gsiSk = if_not_exists(#gsiSk, :gsiSk)',
        '#status = :status, attempts = :attempt, last_attempt_at = :at, response_status = :code, latency_ms = :latency',
        'response_body = :body, #error = :error, next_attempt_at = :next, updated_at = :at, #ttl = :ttl',
        ...(failed ? ['#failedPk = :failedPk, #failedSk = if_not_exists(#gsiSk, :gsiSk)'] : []),
      ].join(', ') + (failed ? '' : ' REMOVE #failedPk, #failedSk'),
    ExpressionAttributeNames: {
      '#type': 'type',
      '#status': 'status',
      '#error': 'error',
      '#gsiPk': GSI1.partitionKey,
      '#gsiSk': GSI1.sortKey,
      '#ttl': TTL_ATTRIBUTE,
      '#failedPk': GSI3.partitionKey,
      '#failedSk': GSI3.sortKey,
    },
    ExpressionAttributeValues: {
      ':type': 'webhook_delivery',
      ':ep': endpointUuid,
      ':id': event.id,
      ':eventType': event.type,
      ':event': packJson(event.json),
      ':at': attempt.at,
      ':gsiPk': listPk(merchantId, endpointUuid),
      ':gsiSk': `${attempt.at}#${event.id}`,
      ':status': attempt.status,
      ':attempt': attempt.attempt,
      ':code': attempt.response_status,
      ':latency': attempt.latency_ms,
      ':body': attempt.response_body === null ? null : responseExcerpt(attempt.response_body),
      ':error': attempt.error,
      ':next': attempt.next_attempt_at,
      ':ttl': expires,
      ...(failed ? { ':failedPk': failedListPk(merchantId, endpointUuid) } : {}),
      ...(keepSucceeded ? { ':succeeded': 'succeeded' } : {}),
    },
  });
};

export const getWebhookDelivery = (db: TableRef, merchantId: string, endpointUuid: string, eventId: string) =>
  getStored(db, 'webhook delivery', deliverySchema, deliveryKey(merchantId, endpointUuid, eventId), true);

/** One page of an endpoint's deliveries, newest first, after `cursor` (a list position the key is rebuilt from, so it stays in this list). */
export const webhookDeliveryPage = async (db: TableRef, merchantId: string, endpointUuid: string, perPage: number, cursor?: string) => {
  const startKey = cursor === undefined ? undefined : positionKey(merchantId, endpointUuid, cursor);
  // One more than the page: whether another page follows is known now, so a full last page has no cursor.
  const query = { ...indexQuery(GSI1, listPk(merchantId, endpointUuid)), ScanIndexForward: false };
  const { Items, LastEvaluatedKey } = await queryPage(db, query, perPage + 1, startKey);
  const read = (Items ?? []).map(parseDelivery);
  const deliveries = read.slice(0, perPage);
  const last = deliveries.at(-1);
  const more = read.length > perPage || LastEvaluatedKey !== undefined;
  return { deliveries, next: more && last ? `${last.created_at}#${last.event_id}` : undefined };
};

const positionKey = (merchantId: string, endpointUuid: string, position: string) => {
  const eventId = position.slice(position.indexOf('#') + 1);
  return {
    ...deliveryKey(merchantId, endpointUuid, eventId),
    [GSI1.partitionKey]: listPk(merchantId, endpointUuid),
    [GSI1.sortKey]: position,
  };
};

/** The most 1 MB pages one read of the failed list takes, so that it answers in bounded time however large the events. */
const FAILED_PAGES_PER_READ = 4;

/** Up to `limit` of the endpoint's failed deliveries from `since` on, oldest first; `next` is the `since` to continue from. */
export const failedWebhookDeliveries = async (db: TableRef, merchantId: string, endpointUuid: string, since: string, limit: number) => {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  let pages = 0;
  const query = indexQuery(GSI3, failedListPk(merchantId, endpointUuid), { condition: '>= :since', values: { ':since': since } });
  for await (const { Items, LastEvaluatedKey } of queryPages(db, query, () => limit + 1 - items.length)) {
    items.push(...(Items ?? []));
    startKey = LastEvaluatedKey;
    if (++pages === FAILED_PAGES_PER_READ || items.length > limit) break;
  }
  const deliveries = items.slice(0, limit).map(parseDelivery);
  // More than `limit`: continue at the next one; pages left unread: continue at the last one read (sent again, harmlessly).
  const next = items.length > limit ? deliveries.length : startKey ? deliveries.length - 1 : -1;
  return { deliveries, next: next >= 0 ? parseDelivery(items[next]).created_at : undefined };
};
