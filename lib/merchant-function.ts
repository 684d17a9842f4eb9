import { resolve } from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, type Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { QUOTA_LEADING_KEYS } from '#shared/db/entities/quota';
import { cdkBundling, ROOT } from './bundling';
import type { FunctionSpec } from './function-specs';

export type MerchantFunctionProps = {
  spec: FunctionSpec;
  environment: Record<string, string>;
  logRetention: RetentionDays;
  removalPolicy: RemovalPolicy;
  tracing: Tracing;
};

export const FUNCTION_RUNTIME = Runtime.NODEJS_22_X;

/** One function of the stack (lib/function-specs.ts), with its own log group and a role the grant helpers add to. */
export class MerchantFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly spec: FunctionSpec;

  constructor(scope: Construct, id: string, props: MerchantFunctionProps) {
    super(scope, id);
    const { spec } = props;
    this.spec = spec;
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${spec.id}: least privilege from the manifest`,
    });
    this.logGroup.grantWrite(this.role);
    this.fn = new NodejsFunction(this, 'Function', {
      entry: resolve(ROOT, spec.handler),
      handler: 'handler',
      projectRoot: ROOT,
      depsLockFilePath: resolve(ROOT, 'package-lock.json'),
      description: `${spec.id}: ${spec.description}`.slice(0, 256),
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(spec.timeoutSeconds),
      tracing: props.tracing,
      logGroup: this.logGroup,
      role: this.role,
      environment: props.environment,
      bundling: cdkBundling(),
    });
  }

  /** GetItem/Query/... on the table, Query on the indexes the access names: nothing more. */
  grantTable(table: ITable) {
    const { access } = this.spec;
    if (access.table.length > 0)
      this.role.addToPrincipalPolicy(new PolicyStatement({ actions: access.table, resources: [table.tableArn] }));
    for (const [index, actions] of Object.entries(access.indexes)) {
      this.role.addToPrincipalPolicy(new PolicyStatement({ actions, resources: [`${table.tableArn}/index/${index}`] }));
    }
    // The merchant's quota (shared/db/entities/quota.ts): UpdateItem on the items of the quota partitions only.
    if (access.quota) {
      this.role.addToPrincipalPolicy(
        new PolicyStatement({
          sid: 'MerchantQuota',
          actions: ['dynamodb:UpdateItem'],
          resources: [table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [QUOTA_LEADING_KEYS] } },
        }),
      );
    }
  }

  /** sqs:SendMessage (which also authorizes SendMessageBatch) on this one queue only (the orders queue, or its DLQ). */
  grantQueueSend(queue: IQueue) {
    this.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
  }

  /** secretsmanager:GetSecretValue on the stage's webhook key only. */
  grantWebhookKey(secret: ISecret) {
    secret.grantRead(this.role);
  }

  /** ses:SendEmail on the sender identity only, and only with the configured From address. */
  grantSendMail(identityArn: string, fromAddress: string) {
    this.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [identityArn],
        conditions: { StringEquals: { 'ses:FromAddress': fromAddress } },
      }),
    );
  }
}
