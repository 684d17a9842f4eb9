import { resolve } from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, type PolicyStatementProps, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { QUOTA_LEADING_KEYS } from '#shared/db/entities/quota';
import type { QueueId } from '#shared/db/table-def';
import { cdkBundling, ROOT } from './bundling';
import type { StageConfig } from './config';
import { type EnvironmentValues, type FunctionSpec, functionEnvironment } from './function-specs';

export type MerchantFunctionProps = {
  spec: FunctionSpec;
  config: Pick<StageConfig, 'logRetention' | 'traceWorkers' | 'mailFrom'>;
  removalPolicy: RemovalPolicy;
  /** The stage's value of every variable: the function gets those its imports read. */
  environmentValues: EnvironmentValues;
  /** What the spec's access may name: the role is granted on these only. */
  table: ITable;
  queues: Record<QueueId, IQueue>;
  webhookKey: ISecret;
  sesIdentityArn: string;
};

export const FUNCTION_RUNTIME = Runtime.NODEJS_22_X;

/** Lambda's log filtering: JSON lines, the platform's WARN (not every START and REPORT) and the application's INFO and up. */
export const FUNCTION_LOGGING = {
  loggingFormat: LoggingFormat.JSON,
  systemLogLevelV2: SystemLogLevel.WARN,
  applicationLogLevelV2: ApplicationLogLevel.INFO,
} as const;

/** One function of the stack (lib/function-specs.ts), with its own log group and a role granted exactly what its spec's access names. */
export class MerchantFunction extends Construct {
  readonly fn: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly spec: FunctionSpec;

  constructor(scope: Construct, id: string, props: MerchantFunctionProps) {
    super(scope, id);
    const { spec } = props;
    this.spec = spec;
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.config.logRetention, removalPolicy: props.removalPolicy });
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
      // A request's functions follow API Gateway's sampling rule; a triggered one starts no trace unless the stage asks.
      tracing: spec.kind === 'route' || props.config.traceWorkers ? Tracing.ACTIVE : Tracing.PASS_THROUGH,
      logGroup: this.logGroup,
      ...FUNCTION_LOGGING,
      role: this.role,
      environment: functionEnvironment(spec, props.environmentValues),
      bundling: cdkBundling(),
    });
    const { access } = spec;
    const { tableArn } = props.table;
    const allow = (actions: string[], resources: string[], more: Partial<PolicyStatementProps> = {}) =>
      this.role.addToPrincipalPolicy(new PolicyStatement({ actions, resources, ...more }));
    // GetItem/Query/... on the table, Query on the indexes the access names: nothing more.
    if (access.table.length > 0) allow(access.table, [tableArn]);
    for (const [index, actions] of Object.entries(access.indexes)) allow(actions, [`${tableArn}/index/${index}`]);
    // The merchant's quota (shared/db/entities/quota.ts): UpdateItem on the items of the quota partitions only.
    if (access.quota) {
      const conditions = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [QUOTA_LEADING_KEYS] } };
      allow(['dynamodb:UpdateItem'], [tableArn], { sid: 'MerchantQuota', conditions });
    }
    // sqs:SendMessage (which also authorizes SendMessageBatch) on each queue it sends to only.
    for (const target of access.sends) allow(['sqs:SendMessage'], [props.queues[target].queueArn]);
    // ses:SendEmail on the sender identity only, and only with the configured From address.
    if (access.mail)
      allow(['ses:SendEmail'], [props.sesIdentityArn], { conditions: { StringEquals: { 'ses:FromAddress': props.config.mailFrom } } });
    // secretsmanager:GetSecretValue on the stage's webhook key only.
    if (access.webhookSecrets) props.webhookKey.grantRead(this.role);
  }
}
