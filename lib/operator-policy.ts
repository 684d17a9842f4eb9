import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { GSI1, GSI2, GSI3 } from '#shared/db/table-def';

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

export type OperatorPolicyProps = {
  stage: string;
  table: ITable;
  ordersQueue: IQueue;
  dlq: IQueue;
  /** The webhooks queue and its slow lane. */
  webhooksQueues: readonly IQueue[];
  parkedQueue: IQueue;
  followUpsQueue: IQueue;
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
    this.policy = new ManagedPolicy(this, 'Policy', {
      description: `Affiliate merchant API (${props.stage}): what npm run seed and npm run admin need against this stage`,
      statements: [
        new PolicyStatement({ sid: 'Table', actions: [...OPERATOR_ACCESS.table], resources: [props.table.tableArn] }),
        new PolicyStatement({
          sid: 'TokenLookup',
          actions: [...OPERATOR_ACCESS.gsi1],
          resources: [`${props.table.tableArn}/index/${GSI1.indexName}`],
        }),
        new PolicyStatement({
          sid: 'TierLists',
          actions: [...OPERATOR_ACCESS.gsi3],
          resources: [`${props.table.tableArn}/index/${GSI3.indexName}`],
        }),
        new PolicyStatement({
          sid: 'OwedMail',
          actions: [...OPERATOR_ACCESS.gsi2],
          resources: [`${props.table.tableArn}/index/${GSI2.indexName}`],
        }),
        new PolicyStatement({
          sid: 'ResendMail',
          actions: [...OPERATOR_ACCESS.mail],
          resources: [props.sesIdentityArn],
          conditions: { StringEquals: { 'ses:FromAddress': props.mailFrom } },
        }),
        new PolicyStatement({ sid: 'RedriveFromDlq', actions: [...OPERATOR_ACCESS.dlq], resources: [props.dlq.queueArn] }),
        new PolicyStatement({
          sid: 'RedriveToOrdersQueue',
          actions: [...OPERATOR_ACCESS.ordersQueue],
          resources: [props.ordersQueue.queueArn],
        }),
        new PolicyStatement({
          sid: 'ReplayWebhooks',
          actions: [...OPERATOR_ACCESS.webhooksQueues],
          resources: props.webhooksQueues.map((queue) => queue.queueArn),
        }),
        new PolicyStatement({ sid: 'ParkedWork', actions: [...OPERATOR_ACCESS.parkedQueue], resources: [props.parkedQueue.queueArn] }),
        new PolicyStatement({
          sid: 'ReplayFollowUps',
          actions: [...OPERATOR_ACCESS.followUpsQueue],
          resources: [props.followUpsQueue.queueArn],
        }),
      ],
    });
  }
}
