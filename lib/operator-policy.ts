import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { GSI1, GSI2, GSI3, type QueueId } from '#shared/db/table-def';

/**
 * What the operator commands do against a deployed stage, action by action (bin/seed.ts,
 * bin/admin.ts, shared/admin/*). The operator policy grants exactly this; test/infra holds the
 * template's policy to it, action by action (the commands' code is checked against it by review).
 */
export const OPERATOR_ACCESS = {
  table: [
    // mint-token, apply, mark-invite-used, link-payment, resend-notifications: read the merchant / item first.
    'dynamodb:GetItem',
    // apply: the block counts of the pending list; recount: the count items and sequence counters; check-totals, rebuild-totals: the ledgers and totals.
    'dynamodb:Query',
    // seed: the merchant (guarded); mint-token, apply: the new item.
    'dynamodb:PutItem',
    // revoke-token, mark-invite-used, link-payment, resend-notifications, recount, quota; seed and apply: sequence counters, block counts, the invite e-mail projection.
    'dynamodb:UpdateItem',
    // seed: every other item in batches of 25; rebuild-totals: the totals of closed periods (puts and removals).
    'dynamodb:BatchWriteItem',
  ],
  /** revoke-token finds the token by its hash; apply pages the pending requests of a slug; recount counts the lists' blocks. */
  gsi1: ['dynamodb:Query'],
  /** recount counts the blocks of each tier's affiliates list; webhooks replay reads an endpoint's failed deliveries. */
  gsi3: ['dynamodb:Query'],
  /** resend-notifications finds a merchant's owed (NOTIFY) and parked (PARKED) e-mails on gsi2 (owed-work.ts). */
  gsi2: ['dynamodb:Query'],
  /** resend-notifications, as the configured sender only. */
  mail: ['ses:SendEmail'],
  /** redrive: read the queues' ARNs, start a message-move task from the DLQ (or move by hand). */
  dlq: ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:StartMessageMoveTask', 'sqs:ReceiveMessage', 'sqs:DeleteMessage'],
  ordersQueue: ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:SendMessage'],
  /** webhooks replay: the deliveries sent again; parked replay: a record's webhook events, on either lane. (webhooks list and deliveries read the table: GetItem, Query on gsi1.) */
  webhooksQueues: ['sqs:GetQueueUrl', 'sqs:SendMessage'],
  /** parked list and replay: receive, look, let go or delete; a replayed record that is still unreadable is parked again. */
  parkedQueue: ['sqs:GetQueueUrl', 'sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:SendMessage'],
  /** parked replay: a parked follow-up put back, or a replayed record's follow-ups. */
  followUpsQueue: ['sqs:GetQueueUrl', 'sqs:SendMessage'],
} as const;

const statement = (sid: string, actions: readonly string[], resources: string[]) =>
  new PolicyStatement({ sid, actions: [...actions], resources });

export type OperatorPolicyProps = {
  stage: string;
  table: ITable;
  queues: Record<QueueId, IQueue>;
  sesIdentityArn: string;
  mailFrom: string;
};

/**
 * A customer-managed policy with exactly what `npm run seed` and `npm run admin` need against this
 * stage (output `OperatorPolicyArn`): attach it to the operators' role or group. Nothing else in
 * the stack uses it; the functions' roles are their own.
 */
export class OperatorPolicy extends Construct {
  readonly policy: ManagedPolicy;

  constructor(scope: Construct, id: string, props: OperatorPolicyProps) {
    super(scope, id);
    const tableArn = props.table.tableArn;
    const { queues } = props;
    this.policy = new ManagedPolicy(this, 'Policy', {
      description: `Affiliate merchant API (${props.stage}): what npm run seed and npm run admin need against this stage`,
      statements: [
        statement('Table', OPERATOR_ACCESS.table, [tableArn]),
        statement('TokenLookup', OPERATOR_ACCESS.gsi1, [`${tableArn}/index/${GSI1.indexName}`]),
        statement('TierLists', OPERATOR_ACCESS.gsi3, [`${tableArn}/index/${GSI3.indexName}`]),
        statement('OwedMail', OPERATOR_ACCESS.gsi2, [`${tableArn}/index/${GSI2.indexName}`]),
        new PolicyStatement({
          sid: 'ResendMail',
          actions: [...OPERATOR_ACCESS.mail],
          resources: [props.sesIdentityArn],
          conditions: { StringEquals: { 'ses:FromAddress': props.mailFrom } },
        }),
        statement('RedriveFromDlq', OPERATOR_ACCESS.dlq, [queues['orders-dlq'].queueArn]),
        statement('RedriveToOrdersQueue', OPERATOR_ACCESS.ordersQueue, [queues.orders.queueArn]),
        statement('ReplayWebhooks', OPERATOR_ACCESS.webhooksQueues, [queues.webhooks.queueArn, queues['webhooks-slow'].queueArn]),
        statement('ParkedWork', OPERATOR_ACCESS.parkedQueue, [queues.parked.queueArn]),
        statement('ReplayFollowUps', OPERATOR_ACCESS.followUpsQueue, [queues['follow-ups'].queueArn]),
      ],
    });
  }
}
