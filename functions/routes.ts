import { GSI3, type QueueId } from '#shared/db/table-def';
import type { EnvelopeKind } from '#shared/http/envelope';
import type { ApiRoute, Replying } from '#shared/http/route';
import type { ReplyData } from './responses';

/** The DynamoDB actions, as IAM names them, in the order policies list them (tests compare them as sets). */
export const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
] as const;
export type TableAction = (typeof TABLE_ACTIONS)[number];

/** What a route's function may touch; the stack derives its role from it (lib/README.md#functions). */
export type Access = {
  /** The DynamoDB actions, as IAM names them, the route's own code uses on the base table (authentication's come on top). */
  table: readonly TableAction[];
  /** Secondary list indexes the route queries besides gsi1 (gsi3: affiliates by tier, an endpoint's failed deliveries). */
  indexes?: readonly (typeof GSI3.indexName)[];
  /** May send e-mail through SES as the configured sender. */
  mail?: boolean;
  /** The queues it sends to (their URLs come in its environment, see table-def.ts QUEUES). */
  sends?: readonly QueueId[];
  /** May read the stage's webhook key (Secrets Manager), to seal or open webhook secrets. */
  webhookSecrets?: boolean;
};

/** An entry of THE route manifest, from which the local server and the CDK stack are both generated. */
export type RouteDef = ApiRoute & {
  path: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  handler: string;
  access: Access;
};

/** A route as the manifest spells it: in the V2 envelope unless it says otherwise, its handler named by its id. */
type RouteEntry = Omit<RouteDef, 'envelope' | 'handler'> & { envelope?: EnvelopeKind };

/** Route `<folder>-<action>` is handled by functions/<folder>/<action>.ts (affiliate-requests is the one folder with a dash). */
const handlerOf = (id: string) => `functions/${id.replace(/^(affiliate-requests|[a-z]+)-/, '$1/')}.ts`;

/** Every API function's Lambda timeout, well inside API Gateway's 29 s. */
export const ROUTE_TIMEOUT_SECONDS = 10;

const entries = [
  {
    id: 'orders-create-legacy',
    method: 'POST',
    status: 201,
    path: '/api/orders/create',
    envelope: 'legacy',
    access: { table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
    placesOrders: true,
    admitsBesideReads: true,
  },
  {
    id: 'orders-create',
    method: 'POST',
    status: 201,
    path: '/api/v2/orders/create',
    access: { table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
    placesOrders: true,
    admitsBesideReads: true,
  },
  {
    id: 'orders-list',
    method: 'GET',
    path: '/api/v2/orders',
    access: { table: ['dynamodb:Query'] },
  },
  {
    id: 'orders-get',
    method: 'GET',
    path: '/api/v2/orders/{uuid}',
    access: { table: ['dynamodb:GetItem'] },
  },
  {
    id: 'orders-update',
    method: 'PATCH',
    path: '/api/v2/orders/{uuid}',
    access: { table: ['dynamodb:UpdateItem'] },
  },
  {
    id: 'orders-cancel',
    method: 'POST',
    path: '/api/v2/orders/{uuid}/cancel',
    access: { table: ['dynamodb:UpdateItem'] },
  },
  {
    id: 'affiliates-list',
    method: 'GET',
    path: '/api/v2/affiliates',
    access: { table: ['dynamodb:Query'], indexes: [GSI3.indexName] },
  },
  {
    id: 'affiliates-get',
    method: 'GET',
    path: '/api/v2/affiliates/{slug}',
    access: { table: ['dynamodb:GetItem'] },
  },
  {
    id: 'invites-create',
    method: 'POST',
    path: '/api/v2/affiliates/invite',
    access: { table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], mail: true },
  },
  {
    id: 'invites-list',
    method: 'GET',
    path: '/api/v2/affiliates/invites',
    access: { table: ['dynamodb:Query', 'dynamodb:BatchGetItem'] },
  },
  {
    id: 'affiliate-requests-list',
    method: 'GET',
    path: '/api/v2/affiliate-requests',
    access: { table: ['dynamodb:Query'] },
  },
  {
    id: 'affiliate-requests-get',
    method: 'GET',
    path: '/api/v2/affiliate-requests/{uuid}',
    access: { table: ['dynamodb:GetItem'] },
  },
  {
    id: 'affiliate-requests-accept',
    method: 'POST',
    path: '/api/v2/affiliate-requests/{uuid}/accept',
    access: { table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'], mail: true },
  },
  {
    id: 'affiliate-requests-decline',
    method: 'POST',
    path: '/api/v2/affiliate-requests/{uuid}/decline',
    access: { table: ['dynamodb:UpdateItem'], mail: true },
  },
  {
    id: 'tiers-list',
    method: 'GET',
    path: '/api/v2/tiers',
    access: { table: ['dynamodb:Query'] },
  },
  {
    id: 'tiers-get',
    method: 'GET',
    path: '/api/v2/tiers/{slug}',
    access: { table: ['dynamodb:GetItem'] },
  },
  {
    id: 'segments-list',
    method: 'GET',
    path: '/api/v2/segments',
    access: { table: ['dynamodb:Query'] },
  },
  {
    id: 'segments-get',
    method: 'GET',
    path: '/api/v2/segments/{uuid}',
    access: { table: ['dynamodb:GetItem', 'dynamodb:Query'] },
  },
  {
    id: 'webhooks-create',
    method: 'POST',
    status: 201,
    path: '/api/v2/webhooks',
    // One transaction puts the endpoint and counts it; GetItem: the endpoint an earlier run of the same keyed request made.
    access: { table: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], webhookSecrets: true },
  },
  {
    id: 'webhooks-list',
    method: 'GET',
    path: '/api/v2/webhooks',
    access: { table: ['dynamodb:Query'] },
  },
  {
    id: 'webhooks-get',
    method: 'GET',
    path: '/api/v2/webhooks/{uuid}',
    access: { table: ['dynamodb:GetItem'] },
  },
  {
    id: 'webhooks-update',
    method: 'PATCH',
    path: '/api/v2/webhooks/{uuid}',
    access: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
  },
  {
    id: 'webhooks-delete',
    method: 'DELETE',
    path: '/api/v2/webhooks/{uuid}',
    // One transaction: Delete the endpoint, Update the merchant's endpoint count.
    access: { table: ['dynamodb:DeleteItem', 'dynamodb:UpdateItem'] },
  },
  {
    id: 'webhooks-rotate-secret',
    method: 'POST',
    path: '/api/v2/webhooks/{uuid}/rotate-secret',
    access: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], webhookSecrets: true },
  },
  {
    id: 'webhooks-test',
    method: 'POST',
    status: 202,
    path: '/api/v2/webhooks/{uuid}/test',
    access: { table: ['dynamodb:GetItem'], sends: ['webhooks', 'webhooks-slow'] },
  },
  {
    id: 'webhooks-deliveries',
    method: 'GET',
    path: '/api/v2/webhooks/{uuid}/deliveries',
    // The deliveries are listed on gsi1 (every route may Query it).
    access: { table: ['dynamodb:GetItem'] },
  },
  {
    id: 'webhooks-resend',
    method: 'POST',
    status: 202,
    path: '/api/v2/webhooks/{uuid}/deliveries/{id}/resend',
    access: { table: ['dynamodb:GetItem', 'dynamodb:PutItem'], sends: ['webhooks', 'webhooks-slow'] },
  },
  {
    id: 'webhooks-recover',
    method: 'POST',
    status: 202,
    path: '/api/v2/webhooks/{uuid}/recover',
    // gsi3: the endpoint's failed deliveries (webhook-delivery.ts); PutItem: a large event stored for its message.
    access: { table: ['dynamodb:GetItem', 'dynamodb:PutItem'], indexes: [GSI3.indexName], sends: ['webhooks', 'webhooks-slow'] },
  },
  {
    id: 'reports-commissions',
    method: 'GET',
    path: '/api/v2/reports/commissions',
    // The commission totals the change feed keeps (one affiliate's on gsi1, which every route may Query).
    access: { table: ['dynamodb:Query'] },
  },
  {
    id: 'events-list',
    method: 'GET',
    path: '/api/v2/events',
    // Query: the merchant's event log, up to its last commit (shared/db/entities/event-log.ts), nothing else.
    access: { table: ['dynamodb:Query'] },
  },
] as const satisfies readonly RouteEntry[];

export const routes = entries.map((entry) => ({
  envelope: 'v2' as const,
  handler: handlerOf(entry.id),
  ...entry,
})) satisfies readonly RouteDef[];

export type RouteId = (typeof routes)[number]['id'];
type RouteOf<Id extends RouteId> = Extract<(typeof routes)[number], { id: Id }>;

/** The manifest entry of one route, typed with the `data` its handler answers (functions/responses.ts). */
export const route = <Id extends RouteId>(id: Id): RouteOf<Id> & Replying<ReplyData<Id>> => {
  const found = routes.find((candidate): candidate is RouteOf<Id> => candidate.id === id);
  if (!found) throw new Error(`Unknown route ${id}`);
  return found;
};

export const routeById = (id: RouteId): RouteDef => route(id);
