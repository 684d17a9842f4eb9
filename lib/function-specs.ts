import { type Access, ROUTE_TIMEOUT_SECONDS, type RouteDef, routes, type TableAction } from '#functions/routes';
import { type WorkerAccess, type WorkerDef, type WorkerTrigger, workers } from '#functions/workers';
import { GSI1, QUEUE_IDS, QUEUES, type QueueId, queueNameForStage } from '#shared/db/table-def';
import { acceptsIdempotencyKey } from '#shared/http/route';

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
  /** sqs:SendMessage on these queues (table-def.ts QUEUES). */
  sends: readonly QueueId[];
  /** The queue its SQS event source mapping consumes (the mapping's actions on that queue only). */
  consumes: QueueId | undefined;
  /** Reads the table's stream through its DynamoDB event source mapping. */
  stream: boolean;
  /** ses:SendEmail as the configured sender identity. */
  mail: boolean;
  /** secretsmanager:GetSecretValue on the stage's webhook key. */
  webhookSecrets: boolean;
  /** UpdateItem on the merchants' quota items only (every route: shared/http/quota.ts). */
  quota: boolean;
};

export type FunctionSpec = {
  id: string;
  handler: string;
  description: string;
  access: FunctionAccess;
  timeoutSeconds: number;
  memoryMb: number;
} & ({ kind: 'route'; route: RouteDef } | { kind: 'worker'; worker: WorkerDef });

/** The order IAM actions are listed in (policies and tests compare them as sets). */
const TABLE_ACTION_ORDER: readonly TableAction[] = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
];

const tableActions = (actions: readonly TableAction[]): string[] => TABLE_ACTION_ORDER.filter((action) => actions.includes(action));

/** What an Idempotency-Key record needs (claim, read, record): every POST route's function. */
export const IDEMPOTENCY_TABLE_ACTIONS: readonly TableAction[] = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

/** A worker's role: exactly its manifest entry's access, and what its trigger reads. Without a trigger, the base of a route's. */
export const workerAccess = ({ access, trigger }: { access: WorkerAccess; trigger?: WorkerTrigger }): FunctionAccess => ({
  table: tableActions(access.table),
  indexes: Object.fromEntries((access.indexes ?? []).map((index) => [index, ['dynamodb:Query']])),
  sends: access.sends ?? [],
  consumes: trigger?.kind === 'queue' ? trigger.queue : undefined,
  stream: trigger?.kind === 'table-stream',
  mail: access.mail ?? false,
  webhookSecrets: access.webhookSecrets ?? false,
  quota: false,
});

/**
 * A route's role: exactly what its manifest entry lists, plus what authentication needs in every
 * route (GetItem of the merchant on the table, Query of the token by its hash on gsi1, which also
 * serves the order sequence; gsi2, owed work, is for the operator tools only), idempotency's on
 * POST, and the quota.
 */
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

/** The values the environment is built from (deploy-time tokens in the stack, placeholders in scripts). */
export type EnvironmentValues = {
  STAGE: string;
  TABLE_NAME: string;
  /** Each queue's URL, by queue id. */
  queueUrls: Record<QueueId, string>;
  MAIL_FROM: string;
  INVITE_LINK_BASE_URL: string;
  AUTH_CACHE_TTL_SECONDS: string;
  /** The Secrets Manager secret of the stage's webhook key (`npm start` gives WEBHOOK_SECRET_KEY instead). */
  WEBHOOK_KEY_SECRET_ARN: string;
};

/** Values for loading function code outside AWS (a bundle's import, the OpenAPI generator): nothing is called with them. */
export const PLACEHOLDER_VALUES: EnvironmentValues = {
  STAGE: 'live',
  TABLE_NAME: 'affiliate-merchant-api-live',
  queueUrls: Object.fromEntries(
    QUEUE_IDS.map((queue) => [queue, `https://sqs.eu-west-1.amazonaws.com/000000000000/${queueNameForStage('live', queue)}`]),
  ) as Record<QueueId, string>,
  MAIL_FROM: 'affiliates@example.com',
  INVITE_LINK_BASE_URL: 'https://dashboard.example.com/invitations',
  AUTH_CACHE_TTL_SECONDS: '30',
  WEBHOOK_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:000000000000:secret:webhook-key',
};

/**
 * Exactly the variables a function's imports read (shared/queue/*.ts and shared/mail/client.ts
 * require theirs at import, so a function gets a queue's URL only when its access says it sends
 * there, and the mail settings only when it mails).
 */
export const functionEnvironment = (spec: FunctionSpec, values: EnvironmentValues): Record<string, string> => ({
  STAGE: values.STAGE,
  TABLE_NAME: values.TABLE_NAME,
  ...Object.fromEntries(spec.access.sends.map((queue) => [QUEUES[queue].envVar, values.queueUrls[queue]])),
  ...(spec.access.mail ? { MAIL_FROM: values.MAIL_FROM, INVITE_LINK_BASE_URL: values.INVITE_LINK_BASE_URL } : {}),
  ...(spec.access.webhookSecrets ? { WEBHOOK_KEY_SECRET_ARN: values.WEBHOOK_KEY_SECRET_ARN } : {}),
  ...(spec.kind === 'route' ? { AUTH_CACHE_TTL_SECONDS: values.AUTH_CACHE_TTL_SECONDS } : {}),
  ...(spec.kind === 'worker' ? (spec.worker.environment ?? {}) : {}),
});
