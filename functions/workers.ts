import { CHANGE_FEED_FILTERS } from '#shared/changes/feed';
import {
  GSI1,
  GSI3,
  type IndexName,
  ORDERS_CONSUMER_TIMEOUT_SECONDS,
  type QueueId,
  WEBHOOKS_CONSUMER_TIMEOUT_SECONDS,
} from '#shared/db/table-def';
import type { Access, RouteDef } from './routes';

/** A Lambda FilterCriteria pattern: objects field by field, arrays of the values a field may equal (local/event-filter.ts). */
export type FilterPattern = { readonly [field: string]: FilterPattern | readonly (string | number | boolean | null)[] };

/** A route's access on any secondary index: the stack grants exactly this (lib/README.md#functions). */
export type WorkerAccess = Omit<Access, 'indexes'> & {
  /** Query on these secondary indexes (by name, see shared/db/table-def.ts). */
  indexes?: readonly IndexName[];
};

export type WorkerTrigger =
  /** An SQS event source mapping (ReportBatchItemFailures) in AWS, local/sqs-poller.ts in `npm start`. */
  | { kind: 'queue'; queue: QueueId; batchSize: number; maxBatchingWindowSeconds: number; maxConcurrency: number }
  /** The table's stream through a DynamoDB event source mapping in AWS, local/stream-poller.ts in `npm start`. */
  | {
      kind: 'table-stream';
      batchSize: number;
      maxBatchingWindowSeconds: number;
      /** -1: retried until the records are older than maxRecordAgeSeconds (Lambda's default). */
      retryAttempts: number;
      maxRecordAgeSeconds: number;
      parallelizationFactor: number;
      /** FilterCriteria patterns: only matching records invoke the function. */
      filterPatterns: readonly FilterPattern[];
      onFailure: QueueId;
    };

export type WorkerDef = Pick<RouteDef, 'id' | 'handler'> & {
  description: string;
  trigger: WorkerTrigger;
  access: WorkerAccess;
  timeoutSeconds: number;
  /** Extra environment besides what its access implies (STAGE, TABLE_NAME, the queues it sends to). */
  environment?: Record<string, string>;
};

/** What both lanes' deliverers may do (they run the same code; a delivery moves between the lanes as its endpoint does). */
const DELIVERER_ACCESS = {
  table: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem', 'dynamodb:UpdateItem'],
  sends: ['webhooks', 'webhooks-slow'],
  mail: true,
  webhookSecrets: true,
} as const satisfies WorkerAccess;

/** How long a follow-up waits at least: a request's own e-mail try, and the list index, settle first. */
export const FOLLOW_UP_MIN_DELAY_SECONDS = 60;

/** The functions that answer no HTTP route: the CDK stack and the local stage process are both built from them. */
export const workers = [
  {
    id: 'change-feed',
    handler: 'functions/changes/feed.ts',
    description:
      'Reacts to every write on the table stream: order events to the orders queue, webhook deliveries, the event log, commission report totals, new customers, follow-ups, group totals.',
    // Retried by time; the handler parks what fails, so this only backs up a refusing parked queue (lib/README.md#change-feed-and-follow-ups).
    trigger: {
      kind: 'table-stream',
      batchSize: 100,
      maxBatchingWindowSeconds: 1,
      retryAttempts: -1,
      maxRecordAgeSeconds: 20 * 60 * 60,
      parallelizationFactor: 1,
      filterPatterns: CHANGE_FEED_FILTERS,
      onFailure: 'parked',
    },
    access: {
      table: ['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'],
      indexes: [GSI1.indexName],
      sends: ['orders', 'follow-ups', 'webhooks', 'webhooks-slow', 'parked'],
    },
    timeoutSeconds: 30,
    environment: { FOLLOW_UP_MIN_DELAY_SECONDS: String(FOLLOW_UP_MIN_DELAY_SECONDS) },
  },
  {
    id: 'follow-ups',
    handler: 'functions/follow-ups/process.ts',
    description:
      'Does owed work when it is due: sends an owed e-mail, recounts a list block marked for recount, notes settled order numbers without an order.',
    trigger: { kind: 'queue', queue: 'follow-ups', batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 10 },
    access: {
      table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      indexes: [GSI1.indexName, GSI3.indexName],
      sends: ['follow-ups'],
      mail: true,
    },
    timeoutSeconds: ORDERS_CONSUMER_TIMEOUT_SECONDS,
  },
  {
    id: 'commissions-process',
    handler: 'functions/commissions/process.ts',
    description: 'Consumes order events and keeps one commission ledger per order (idempotent, in version order).',
    // 100 at once: more than the table's ceiling takes, and a backlog leaves the API its concurrency (lib/README.md#commission-consumer).
    trigger: { kind: 'queue', queue: 'orders', batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 100 },
    access: { table: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem'], sends: ['orders-dlq'] },
    timeoutSeconds: ORDERS_CONSUMER_TIMEOUT_SECONDS,
  },
  {
    id: 'webhooks-deliver',
    handler: 'functions/webhooks/deliver.ts',
    description: 'Delivers webhook events: one signed POST per message, retried on the Standard Webhooks schedule.',
    // One delivery per invocation, so a slow POST holds one deliverer; lanes and slots: docs/webhooks.md#how-it-works.
    trigger: { kind: 'queue', queue: 'webhooks', batchSize: 1, maxBatchingWindowSeconds: 0, maxConcurrency: 50 },
    access: DELIVERER_ACCESS,
    timeoutSeconds: WEBHOOKS_CONSUMER_TIMEOUT_SECONDS,
  },
  {
    id: 'webhooks-deliver-slow',
    handler: 'functions/webhooks/deliver.ts',
    description:
      'Delivers webhook events to endpoints not known to answer promptly (new, failing, slow or hanging), on deliverers of their own.',
    trigger: { kind: 'queue', queue: 'webhooks-slow', batchSize: 1, maxBatchingWindowSeconds: 0, maxConcurrency: 20 },
    access: DELIVERER_ACCESS,
    timeoutSeconds: WEBHOOKS_CONSUMER_TIMEOUT_SECONDS,
  },
] as const satisfies readonly WorkerDef[];

export type WorkerId = (typeof workers)[number]['id'];

export type QueueWorkerDef = WorkerDef & { trigger: Extract<WorkerTrigger, { kind: 'queue' }> };
export type StreamWorkerDef = WorkerDef & { trigger: Extract<WorkerTrigger, { kind: 'table-stream' }> };

const allWorkers: readonly WorkerDef[] = workers;

/** The workers fed by a queue (the commission consumer, the follow-ups). */
export const queueWorkers = (): QueueWorkerDef[] =>
  allWorkers.filter((worker): worker is QueueWorkerDef => worker.trigger.kind === 'queue');

/** The workers fed by the table's stream (the change feed). */
export const streamWorkers = (): StreamWorkerDef[] =>
  allWorkers.filter((worker): worker is StreamWorkerDef => worker.trigger.kind === 'table-stream');
