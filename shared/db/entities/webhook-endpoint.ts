import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod/mini';
import { queryKeyPrefix } from '#shared/db/query';
import type { TableRef } from '#shared/db/table-def';
import { transactWrite } from '#shared/db/transact';
import { MAX_WEBHOOK_ENDPOINTS } from '#shared/schemas/webhooks';
import { itemKey, type Key, nullableString, parseStored, parseStoredOptional } from './base';

/**
 * A merchant's webhook endpoint: `WEBHOOK#<uuid>` in the merchant's partition (read by the change
 * feed with one Query per merchant and batch), and `WEBHOOK_COUNT`, how many the merchant has (at
 * most MAX_WEBHOOK_ENDPOINTS), moved in the same transaction as a create or delete. Neither is hot:
 * endpoints are created and deleted by hand.
 *
 * Besides what the merchant set, it carries the delivery state the deliverer keeps: the failure
 * streak (`failing_since`, `consecutive_failures`, `retry_at`: while failing, only one delivery
 * probes the endpoint and the rest wait), and DELIVERY_SLOTS leases (`slot_<n>`: until when a
 * delivery holds it) that bound how many deliveries to one endpoint run at once.
 */
const SK_PREFIX = 'WEBHOOK#';
export const DELIVERY_SLOTS = 4;

export const webhookEndpointKey = (merchantId: string, uuid: string): Key => itemKey(merchantId, `${SK_PREFIX}${uuid}`);
const countKey = (merchantId: string): Key => itemKey(merchantId, 'WEBHOOK_COUNT');

const endpointSchema = z.looseObject({
  uuid: z.string(),
  url: z.string(),
  description: nullableString(),
  /** The event types delivered; empty: every type. */
  events: z.array(z.string()),
  enabled: z.boolean(),
  /** Why the service disabled it (410 Gone, a failure streak); null when enabled or disabled by the merchant. */
  disabled_reason: nullableString(),
  secret_box: z.string(),
  previous_secret_box: z.optional(z.string()),
  previous_secret_expires_at: z.optional(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  failing_since: z.optional(z.string()),
  consecutive_failures: z.optional(z.number()),
  retry_at: z.optional(z.string()),
  streak_notified_at: z.optional(z.string()),
});
export type WebhookEndpointItem = z.output<typeof endpointSchema>;

export const parseWebhookEndpoint = (raw: unknown): WebhookEndpointItem => parseStored('webhook endpoint', endpointSchema, raw);

export type NewWebhookEndpoint = Pick<WebhookEndpointItem, 'uuid' | 'url' | 'description' | 'events' | 'enabled' | 'secret_box'>;

export class TooManyWebhookEndpoints extends Error {
  override name = 'TooManyWebhookEndpoints';
}

/**
 * Puts a new endpoint and counts it, in one transaction conditional on the merchant having fewer
 * than the maximum: refused on `count` at the maximum, on `endpoint` when it exists already.
 */
export const putWebhookEndpoint = async (db: TableRef, merchantId: string, endpoint: NewWebhookEndpoint, now: string): Promise<void> => {
  await transactWrite(db, {
    endpoint: {
      Put: {
        Item: {
          ...webhookEndpointKey(merchantId, endpoint.uuid),
          type: 'webhook_endpoint',
          ...endpoint,
          disabled_reason: null,
          created_at: now,
          updated_at: now,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    count: {
      Update: {
        Key: countKey(merchantId),
        UpdateExpression: 'SET endpoints = if_not_exists(endpoints, :zero) + :one',
        ConditionExpression: 'attribute_not_exists(endpoints) OR endpoints < :max',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': MAX_WEBHOOK_ENDPOINTS },
      },
    },
  });
};

/** Deletes an endpoint and uncounts it; refused (TransactionRefused on `endpoint`) when it does not exist. */
export const deleteWebhookEndpoint = (db: TableRef, merchantId: string, uuid: string): Promise<void> =>
  transactWrite(db, {
    endpoint: { Delete: { Key: webhookEndpointKey(merchantId, uuid), ConditionExpression: 'attribute_exists(pk)' } },
    count: {
      // if_not_exists: a merchant without endpoints has no count item, and the Delete's condition refuses the transaction anyway.
      Update: {
        Key: countKey(merchantId),
        UpdateExpression: 'SET endpoints = if_not_exists(endpoints, :one) - :one',
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
  });

export const getWebhookEndpoint = async (
  { ddb, table }: TableRef,
  merchantId: string,
  uuid: string,
  consistent = false,
): Promise<WebhookEndpointItem | undefined> => {
  const { Item } = await ddb.send(
    new GetCommand({ TableName: table, Key: webhookEndpointKey(merchantId, uuid), ConsistentRead: consistent }),
  );
  return parseStoredOptional('webhook endpoint', endpointSchema, Item);
};

/** Every endpoint of the merchant (at most MAX_WEBHOOK_ENDPOINTS), oldest first. */
export const allWebhookEndpoints = async (db: TableRef, merchantId: string): Promise<WebhookEndpointItem[]> =>
  (await queryKeyPrefix(db, itemKey(merchantId, '').pk, SK_PREFIX))
    .map(parseWebhookEndpoint)
    .sort((a, b) => a.created_at.localeCompare(b.created_at));

/** Runs a conditional UpdateItem on an endpoint; false when its condition failed. */
const updateEndpoint = async (
  { ddb, table }: TableRef,
  merchantId: string,
  uuid: string,
  update: { set: string; remove?: string; condition: string; values: Record<string, unknown>; names?: Record<string, string> },
): Promise<boolean> => {
  try {
    await ddb.send(
      new UpdateCommand({
        TableName: table,
        Key: webhookEndpointKey(merchantId, uuid),
        UpdateExpression: `SET ${update.set}${update.remove ? ` REMOVE ${update.remove}` : ''}`,
        ConditionExpression: `attribute_exists(pk) AND (${update.condition})`,
        ExpressionAttributeValues: update.values,
        ...(update.names ? { ExpressionAttributeNames: update.names } : {}),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};

export type EndpointChanges = Partial<Pick<WebhookEndpointItem, 'url' | 'description' | 'events' | 'enabled'>>;

/**
 * Applies the merchant's changes; false when the endpoint does not exist. Enabling it again starts
 * afresh: the failure streak and the service's reason for disabling it are cleared.
 */
export const updateWebhookEndpoint = (db: TableRef, merchantId: string, uuid: string, changes: EndpointChanges, now: string) => {
  const entries = Object.entries(changes).filter(([, value]) => value !== undefined);
  const set = [...entries.map(([name]) => `#${name} = :${name}`), 'updated_at = :now'];
  const values: Record<string, unknown> = { ':now': now, ...Object.fromEntries(entries.map(([name, value]) => [`:${name}`, value])) };
  const names = Object.fromEntries(entries.map(([name]) => [`#${name}`, name]));
  const restart = changes.enabled === true;
  if (restart) set.push('disabled_reason = :null');
  if (restart) values[':null'] = null;
  return updateEndpoint(db, merchantId, uuid, {
    set: set.join(', '),
    ...(restart ? { remove: 'failing_since, consecutive_failures, retry_at, streak_notified_at' } : {}),
    condition: 'attribute_exists(pk)',
    values,
    ...(entries.length > 0 ? { names } : {}),
  });
};

/**
 * Makes `secretBox` the endpoint's secret and keeps the current one beside it until `previousUntil`,
 * on the condition that the endpoint is as it was read (`readAt`: its updated_at), so two
 * rotations at once cannot both keep a secret that the other replaced. False when refused.
 */
export const rotateWebhookSecret = (
  db: TableRef,
  merchantId: string,
  endpoint: WebhookEndpointItem,
  secretBox: string,
  previousUntil: string,
  now: string,
) =>
  updateEndpoint(db, merchantId, endpoint.uuid, {
    set: 'secret_box = :box, previous_secret_box = :previous, previous_secret_expires_at = :until, updated_at = :now',
    condition: 'updated_at = :read',
    values: { ':box': secretBox, ':previous': endpoint.secret_box, ':until': previousUntil, ':now': now, ':read': endpoint.updated_at },
  });

/** The service disables an endpoint (410 Gone, a failure streak); false when it was already disabled or is gone. */
export const disableWebhookEndpoint = (db: TableRef, merchantId: string, uuid: string, reason: string, now: string) =>
  updateEndpoint(db, merchantId, uuid, {
    set: 'enabled = :false, disabled_reason = :reason, updated_at = :now',
    remove: 'retry_at',
    condition: 'enabled = :true',
    values: { ':false': false, ':true': true, ':reason': reason, ':now': now },
  });

/**
 * Records one attempt's outcome on the endpoint: a success ends the failure streak; a failure
 * starts or extends it and holds back the endpoint's other deliveries until `retryAt`.
 */
export const recordEndpointOutcome = (
  { ddb, table }: TableRef,
  merchantId: string,
  uuid: string,
  outcome: { ok: true } | { ok: false; at: string; retryAt: string },
) =>
  ddb
    .send(
      new UpdateCommand({
        TableName: table,
        Key: webhookEndpointKey(merchantId, uuid),
        ...(outcome.ok
          ? { UpdateExpression: 'REMOVE failing_since, consecutive_failures, retry_at, streak_notified_at' }
          : {
              UpdateExpression:
                'SET failing_since = if_not_exists(failing_since, :at), consecutive_failures = if_not_exists(consecutive_failures, :zero) + :one, retry_at = :retryAt',
              ExpressionAttributeValues: { ':at': outcome.at, ':zero': 0, ':one': 1, ':retryAt': outcome.retryAt },
            }),
        ConditionExpression: 'attribute_exists(pk)',
        ReturnValues: 'ALL_NEW',
      }),
    )
    .then(
      ({ Attributes }) => parseWebhookEndpoint(Attributes),
      (error: unknown) => {
        if (error instanceof ConditionalCheckFailedException) return undefined;
        throw error;
      },
    );

/** Marks that the merchant was told of the current failure streak; false when someone already did. */
export const markStreakNotified = (db: TableRef, merchantId: string, uuid: string, now: string) =>
  updateEndpoint(db, merchantId, uuid, {
    set: 'streak_notified_at = :now',
    condition: 'attribute_not_exists(streak_notified_at) AND attribute_exists(failing_since)',
    values: { ':now': now },
  });

/**
 * Takes one of the endpoint's delivery slots until `until` (a lease: a deliverer that dies frees
 * its slot when the lease ends); the slot's name, or undefined when all are held.
 */
export const takeDeliverySlot = async (db: TableRef, merchantId: string, uuid: string, now: string, until: string, start = 0) => {
  for (let offset = 0; offset < DELIVERY_SLOTS; offset++) {
    const slot = `slot_${(start + offset) % DELIVERY_SLOTS}`;
    const taken = await updateEndpoint(db, merchantId, uuid, {
      set: '#slot = :until',
      condition: 'attribute_not_exists(#slot) OR #slot < :now',
      values: { ':until': until, ':now': now },
      names: { '#slot': slot },
    });
    if (taken) return slot;
  }
  return undefined;
};

/** Gives a slot back once its delivery is over. */
export const releaseDeliverySlot = ({ ddb, table }: TableRef, merchantId: string, uuid: string, slot: string) =>
  ddb
    .send(
      new UpdateCommand({
        TableName: table,
        Key: webhookEndpointKey(merchantId, uuid),
        UpdateExpression: 'REMOVE #slot',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#slot': slot },
      }),
    )
    .catch((error: unknown) => {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    });
