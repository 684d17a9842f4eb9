import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { GSI1, GSI2, GSI3, type QueueId } from '#shared/db/table-def';

export type OperatorPolicyProps = {
  stage: string;
  table: ITable;
  queues: Record<QueueId, IQueue>;
  sesIdentityArn: string;
  mailFrom: string;
};

const statement = (sid: string, actions: string[], resources: string[]) => new PolicyStatement({ sid, actions, resources });

/** Exactly what `npm run seed` and `npm run admin` need against this stage, for the operators (lib/README.md says which command needs each). */
export class OperatorPolicy extends Construct {
  readonly policy: ManagedPolicy;

  constructor(scope: Construct, id: string, props: OperatorPolicyProps) {
    super(scope, id);
    const tableArn = props.table.tableArn;
    const { queues } = props;
    const index = (name: string) => [`${tableArn}/index/${name}`];
    const sendTo = ['sqs:GetQueueUrl', 'sqs:SendMessage'];
    this.policy = new ManagedPolicy(this, 'Policy', {
      description: `Affiliate merchant API (${props.stage}): what npm run seed and npm run admin need against this stage`,
      statements: [
        statement(
          'Table',
          ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'],
          [tableArn],
        ),
        statement('TokenLookup', ['dynamodb:Query'], index(GSI1.indexName)),
        statement('TierLists', ['dynamodb:Query'], index(GSI3.indexName)),
        statement('OwedMail', ['dynamodb:Query'], index(GSI2.indexName)),
        new PolicyStatement({
          sid: 'ResendMail',
          actions: ['ses:SendEmail'],
          resources: [props.sesIdentityArn],
          conditions: { StringEquals: { 'ses:FromAddress': props.mailFrom } },
        }),
        statement(
          'RedriveFromDlq',
          ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:StartMessageMoveTask', 'sqs:ReceiveMessage', 'sqs:DeleteMessage'],
          [queues['orders-dlq'].queueArn],
        ),
        statement('RedriveToOrdersQueue', ['sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:SendMessage'], [queues.orders.queueArn]),
        statement('ReplayWebhooks', sendTo, [queues.webhooks.queueArn, queues['webhooks-slow'].queueArn]),
        statement(
          'ParkedWork',
          ['sqs:GetQueueUrl', 'sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:SendMessage'],
          [queues.parked.queueArn],
        ),
        statement('ReplayFollowUps', sendTo, [queues['follow-ups'].queueArn]),
      ],
    });
  }
}
