import { GSI1, GSI2, GSI3, type IndexName, ORDERS_CONSUMER_TIMEOUT_SECONDS } from '#shared/db/table-def';

/**
 * The functions that answer no HTTP route: the scheduled outbox relay and the commission consumer
 * on the orders queue. Data only, like routes.ts; the CDK stack and the local stage process are
 * both built from it.
 *
 * Their access is spelled out action by action (they do not fit the routes' read/write levels):
 * the stack grants exactly these actions and nothing else.
 */

/** A DynamoDB action, as IAM names it. */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:ConditionCheckItem';

export type WorkerAccess = {
  /** DynamoDB actions on the base table. */
  table: readonly TableAction[];
  /** Query on these secondary indexes (by name, see shared/db/table-def.ts). */
  indexes?: readonly IndexName[];
  /** The orders queue: send to it, or consume it (through its event source mapping). */
  queue?: 'send' | 'consume';
  /** May send e-mail through SES as the configured sender. */
  mail?: boolean;
  /**
   * May send to the orders queue's dead-letter queue (ORDERS_DLQ_URL): a consumer that moves a
   * message that can never succeed there at once, with its reason, instead of burning receives.
   */
  deadLetter?: boolean;
};

export type WorkerTrigger =
  /** EventBridge schedule in AWS, a timer in `npm start`. */
  | { kind: 'schedule'; everyMinutes: number }
  /** SQS event source mapping on the orders queue (ReportBatchItemFailures), a poller in `npm start`. */
  | { kind: 'orders-queue'; batchSize: number; maxBatchingWindowSeconds: number; maxConcurrency: number };

export type WorkerDef = {
  id: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  handler: string;
  description: string;
  trigger: WorkerTrigger;
  access: WorkerAccess;
  timeoutSeconds: number;
  /** Extra environment besides what its access implies (STAGE, TABLE_NAME, ORDERS_QUEUE_URL). */
  environment?: Record<string, string>;
};

export const workers = [
  {
    id: 'outbox-relay',
    handler: 'functions/outbox/relay.ts',
    description: 'Re-sends order events whose queue send failed (outbox entries on gsi2).',
    trigger: { kind: 'schedule', everyMinutes: 1 },
    // Query the sparse outbox index, GetItem the order (its versions), send one message per
    // unpublished version, mark them published (UpdateItem published_version, clear the outbox entry);
    // the list block of an order whose create did not finish is marked for recount (UpdateItem).
    access: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], indexes: [GSI2.indexName], queue: 'send' },
    timeoutSeconds: 50,
    environment: { OUTBOX_MIN_AGE_SECONDS: '30' },
  },
  {
    id: 'notification-relay',
    handler: 'functions/notifications/relay.ts',
    description: 'Sends invitation and affiliate-request e-mails SES failed to send (NOTIFY entries on gsi2).',
    trigger: { kind: 'schedule', everyMinutes: 1 },
    // Query the sparse index, GetItem the owing item and its merchant (and an accepted request's
    // affiliate), finish the unfinished request (recount marks, an invite's e-mail projection entry:
    // UpdateItem), send, settle (UpdateItem).
    access: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], indexes: [GSI2.indexName], mail: true },
    timeoutSeconds: 50,
    environment: { NOTIFICATION_MIN_AGE_SECONDS: '60' },
  },
  {
    id: 'count-repair',
    handler: 'functions/counts/repair.ts',
    description: 'Recounts list blocks whose count update failed or was retried (RECOUNT entries on gsi2).',
    trigger: { kind: 'schedule', everyMinutes: 5 },
    // Query the sparse index for marks, GetItem the count, Query (Select COUNT) the block on the
    // list's index (gsi1, or gsi3 for a tier's affiliates), conditional UpdateItem of the count.
    access: { table: ['dynamodb:GetItem', 'dynamodb:UpdateItem'], indexes: [GSI1.indexName, GSI2.indexName, GSI3.indexName] },
    timeoutSeconds: 50,
    environment: { RECOUNT_MIN_AGE_SECONDS: '60' },
  },
  {
    id: 'commissions-process',
    handler: 'functions/commissions/process.ts',
    description: 'Consumes order events and keeps one commission ledger per order (idempotent, in version order).',
    trigger: { kind: 'orders-queue', batchSize: 10, maxBatchingWindowSeconds: 1, maxConcurrency: 2 },
    // GetItem order + ledger (+ affiliate), Query the merchant's segments, conditional PutItem of the ledger;
    // a message that can never succeed is sent to the DLQ with its reason.
    access: { table: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem'], queue: 'consume', deadLetter: true },
    timeoutSeconds: ORDERS_CONSUMER_TIMEOUT_SECONDS,
  },
] as const satisfies readonly WorkerDef[];

export type WorkerId = (typeof workers)[number]['id'];

export type QueueWorkerDef = WorkerDef & { trigger: Extract<WorkerTrigger, { kind: 'orders-queue' }> };

/** The workers fed by the orders queue (the commission consumer). */
export const queueWorkers = (): QueueWorkerDef[] => {
  const all: readonly WorkerDef[] = workers;
  return all.filter((worker): worker is QueueWorkerDef => worker.trigger.kind === 'orders-queue');
};
