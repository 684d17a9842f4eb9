import { type Access, ROUTE_TIMEOUT_SECONDS, type RouteDef, routes, TABLE_ACTIONS, type TableAction } from '#functions/routes';
import { type WorkerAccess, type WorkerDef, type WorkerTrigger, workers } from '#functions/workers';
import { GSI1, QUEUE_IDS, QUEUES, type QueueId, queueNameForStage, tableNameForStage } from '#shared/db/table-def';
import { acceptsIdempotencyKey } from '#shared/http/route';

/** Every deployed function from the two manifests: what it may touch and the environment its imports need. */

/** What a function may touch; its role is derived from it (lib/merchant-function.ts). */
export type FunctionAccess = ReturnType<typeof workerAccess>;

export type FunctionSpec = {
  id: string;
  handler: string;
  description: string;
  access: FunctionAccess;
  timeoutSeconds: number;
  memoryMb: number;
} & ({ kind: 'route'; route: RouteDef } | { kind: 'worker'; worker: WorkerDef });

/** `orders-create-legacy` -> `OrdersCreateLegacy`, `affiliate_request.created` -> `AffiliateRequestCreated`: construct ids, schema names. */
export const pascalCase = (name: string) => name.replace(/(^|[-._])(\w)/g, (_match, _separator, letter: string) => letter.toUpperCase());

/** What an Idempotency-Key record needs (claim, read, record): every POST route's function. */
export const IDEMPOTENCY_TABLE_ACTIONS: readonly TableAction[] = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

/** A worker's role: exactly its manifest entry's access, and what its trigger reads. Without a trigger, the base of a route's. */
export const workerAccess = ({ access, trigger }: { access: WorkerAccess; trigger?: WorkerTrigger }) => ({
  table: TABLE_ACTIONS.filter((action) => access.table.includes(action)),
  indexes: Object.fromEntries((access.indexes ?? []).map((index) => [index, ['dynamodb:Query']])),
  sends: access.sends ?? [],
  consumes: trigger?.kind === 'queue' ? trigger.queue : undefined,
  stream: trigger?.kind === 'table-stream',
  mail: access.mail ?? false,
  webhookSecrets: access.webhookSecrets ?? false,
  // UpdateItem on the merchants' quota items only (every route: shared/http/quota.ts).
  quota: false,
});

/** A route's role: what its manifest entry lists, plus authentication's GetItem and gsi1 Query, idempotency's on POST, and the quota. */
export const routeAccess = ({ access, method }: Pick<RouteDef, 'method'> & { access: Access }): FunctionAccess => ({
  ...workerAccess({
    access: {
      ...access,
      table: ['dynamodb:GetItem', ...(acceptsIdempotencyKey({ method }) ? IDEMPOTENCY_TABLE_ACTIONS : []), ...access.table],
      indexes: [GSI1.indexName, ...(access.indexes ?? [])],
    },
  }),
  quota: true,
});

export const functionSpecs = (): FunctionSpec[] => [
  ...routes.map(
    (route): FunctionSpec => ({
      kind: 'route',
      route,
      id: route.id,
      handler: route.handler,
      description: `${route.method} ${route.path}`,
      access: routeAccess(route),
      timeoutSeconds: ROUTE_TIMEOUT_SECONDS,
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
      access: workerAccess(worker),
      timeoutSeconds: worker.timeoutSeconds,
      memoryMb: 256,
    }),
  ),
];

/** Values for loading function code outside AWS (a bundle's import, the OpenAPI generator): nothing is called with them. */
export const PLACEHOLDER_VALUES = {
  STAGE: 'live',
  TABLE_NAME: tableNameForStage('live'),
  queueUrls: Object.fromEntries(
    QUEUE_IDS.map((queue) => [queue, `https://sqs.eu-west-1.amazonaws.com/000000000000/${queueNameForStage('live', queue)}`]),
  ) as Record<QueueId, string>,
  MAIL_FROM: 'affiliates@example.com',
  INVITE_LINK_BASE_URL: 'https://dashboard.example.com/invitations',
  AUTH_CACHE_TTL_SECONDS: '30',
  // The stage's webhook key in Secrets Manager (`npm start` gives WEBHOOK_SECRET_KEY instead).
  WEBHOOK_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:000000000000:secret:webhook-key',
};

/** The values the environment is built from (deploy-time tokens in the stack, placeholders in scripts). */
export type EnvironmentValues = typeof PLACEHOLDER_VALUES;

/** Exactly the variables a function's imports read: a queue's URL only when it sends there, the mail settings only when it mails. */
export const functionEnvironment = (spec: FunctionSpec, values: EnvironmentValues): Record<string, string> => ({
  STAGE: values.STAGE,
  TABLE_NAME: values.TABLE_NAME,
  ...Object.fromEntries(spec.access.sends.map((queue) => [QUEUES[queue].envVar, values.queueUrls[queue]])),
  ...(spec.access.mail ? { MAIL_FROM: values.MAIL_FROM, INVITE_LINK_BASE_URL: values.INVITE_LINK_BASE_URL } : {}),
  ...(spec.access.webhookSecrets ? { WEBHOOK_KEY_SECRET_ARN: values.WEBHOOK_KEY_SECRET_ARN } : {}),
  ...(spec.kind === 'route' ? { AUTH_CACHE_TTL_SECONDS: values.AUTH_CACHE_TTL_SECONDS } : {}),
  ...(spec.kind === 'worker' ? (spec.worker.environment ?? {}) : {}),
});
