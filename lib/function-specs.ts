import { routes, type Access, type RouteDef } from '../functions/routes';
import { workers, type WorkerAccess, type WorkerDef } from '../functions/workers';
import { GSI1, GSI3 } from '../shared/db/table-def';

/**
 * Every deployed function, derived from the two manifests (functions/routes.ts and
 * functions/workers.ts): what it may touch and which environment its imports need. The stack,
 * the infra tests and scripts/bundle-size.ts all start here, so a new route in the manifest gets
 * its function, its least-privilege role and its API method without touching lib/.
 */

export type FunctionAccess = {
  /** DynamoDB actions on the base table. */
  table: string[];
  /** DynamoDB actions per secondary index. */
  indexes: Record<string, string[]>;
  /** send: SendMessage to the orders queue; consume: the event source mapping's actions. */
  queue: 'send' | 'consume' | undefined;
  /** ses:SendEmail as the configured sender identity. */
  mail: boolean;
};

export type FunctionSpec = {
  id: string;
  handler: string;
  description: string;
  access: FunctionAccess;
  timeoutSeconds: number;
  memoryMb: number;
} & ({ kind: 'route'; route: RouteDef } | { kind: 'worker'; worker: WorkerDef });

/**
 * What a `read` route may do: GetItem and Query, nothing else. BatchGetItem is authorized as its
 * own action but reads no more than GetItem does (the invites list's e-mail filter fetches its page
 * with it).
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
/** What a `write` route may do besides reading: the item actions TransactWriteItems is authorized by. */
export const TABLE_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'];

/**
 * Routes query gsi1 (token lookup, every sequenced list) and gsi3 (affiliates by tier, the
 * tier_slug filter); gsi2 is the outbox index, for the relays only.
 */
export const routeAccess = (access: Access): FunctionAccess => ({
  table: [...TABLE_READ_ACTIONS, ...(access.table === 'write' ? TABLE_WRITE_ACTIONS : [])],
  indexes: { [GSI1.indexName]: ['dynamodb:Query'], [GSI3.indexName]: ['dynamodb:Query'] },
  queue: access.queue ? 'send' : undefined,
  mail: access.mail ?? false,
});

export const workerAccess = (access: WorkerAccess): FunctionAccess => ({
  table: access.table.map((action) => `dynamodb:${action}`),
  indexes: Object.fromEntries((access.indexes ?? []).map((index) => [index, ['dynamodb:Query']])),
  queue: access.queue,
  mail: access.mail ?? false,
});

export const functionSpecs = (): FunctionSpec[] => [
  ...routes.map(
    (route): FunctionSpec => ({
      kind: 'route',
      route,
      id: route.id,
      handler: route.handler,
      description: `${route.method} ${route.path}`,
      access: routeAccess(route.access),
      timeoutSeconds: 10,
      memoryMb: 256,
    }),
  ),
  ...workers.map(
    (worker): FunctionSpec => ({
      kind: 'worker',
      worker,
      id: worker.id,
      handler: worker.handler,
      description: worker.description,
      access: workerAccess(worker.access),
      timeoutSeconds: worker.timeoutSeconds,
      memoryMb: 256,
    }),
  ),
];

/** The values the environment is built from (deploy-time tokens in the stack, placeholders in scripts). */
export type EnvironmentValues = {
  STAGE: string;
  TABLE_NAME: string;
  ORDERS_QUEUE_URL: string;
  MAIL_FROM: string;
  INVITE_LINK_BASE_URL: string;
  AUTH_CACHE_TTL_SECONDS: string;
};

/**
 * Exactly the variables a function's imports read (shared/queue/client.ts and shared/mail/client.ts
 * require theirs at import, so a function gets them only when its access says it sends or mails).
 */
export const functionEnvironment = (spec: FunctionSpec, values: EnvironmentValues): Record<string, string> => ({
  STAGE: values.STAGE,
  TABLE_NAME: values.TABLE_NAME,
  ...(spec.access.queue === 'send' ? { ORDERS_QUEUE_URL: values.ORDERS_QUEUE_URL } : {}),
  ...(spec.access.mail ? { MAIL_FROM: values.MAIL_FROM, INVITE_LINK_BASE_URL: values.INVITE_LINK_BASE_URL } : {}),
  ...(spec.kind === 'route' ? { AUTH_CACHE_TTL_SECONDS: values.AUTH_CACHE_TTL_SECONDS } : {}),
  ...(spec.kind === 'worker' ? (spec.worker.environment ?? {}) : {}),
});
