import { App } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import type { CfnResource } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import cdkJson from '../../cdk.json';
import { routes } from '../../functions/routes';
import { workers } from '../../functions/workers';
import { buildApp } from '../../lib/app';
import type { MerchantApiStage } from '../../lib/merchant-api-stage';
import { STAGES, type Stage } from '../../shared/config';
import { GLOBAL_INDEXES, ordersDlqNameForStage, ordersQueueNameForStage, tableNameForStage } from '../../shared/db/table-def';

/**
 * The deployed shape, asserted on the synthesized templates of both stages. The app is built and
 * synthesized once (real esbuild bundling of every function), as `cdk synth` would.
 */

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; Metadata?: Record<string, any> };
type Synth = { stack: MerchantApiStage; template: Template; resources: Record<string, Resource> };

const MAIL_FROM = 'affiliates@infra-test.example';
const synth = {} as Record<Stage, Synth>;

beforeAll(() => {
  const app = new App({ context: { ...cdkJson.context, mailFrom: MAIL_FROM, inviteLinkBaseUrl: 'https://dashboard.infra-test.example/invitations' } });
  const stacks = buildApp(app);
  for (const stage of STAGES) {
    const template = Template.fromStack(stacks[stage]);
    synth[stage] = { stack: stacks[stage], template, resources: template.toJSON().Resources };
  }
}, 120_000);

const logicalId = (stack: MerchantApiStage, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnResource);

const ofType = (resources: Record<string, Resource>, type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);

const functionOf = (stage: Stage, id: string) => {
  const fn = synth[stage].stack.functions.find((candidate) => candidate.spec.id === id);
  if (!fn) throw new Error(`no function ${id}`);
  return fn;
};

/** The full path of an API Gateway resource, from its PathPart chain. */
const resourcePath = (resources: Record<string, Resource>, ref: any): string => {
  if (ref?.Ref === undefined) return '';
  const resource = resources[ref.Ref] as Resource;
  const parent = resource.Properties.ParentId;
  return `${parent?.Ref ? resourcePath(resources, parent) : ''}/${resource.Properties.PathPart}`;
};

/** Describes an IAM resource as the kind of thing it is, so policies compare readably. */
const describeResource = (stage: Stage, resource: any, ownLogGroup: string): string => {
  const { stack } = synth[stage];
  const table = logicalId(stack, stack.data.table);
  const queue = logicalId(stack, stack.data.queue);
  const dlq = logicalId(stack, stack.data.dlq);
  if (resource === '*') return '*';
  const getAtt = resource?.['Fn::GetAtt'];
  if (getAtt) {
    if (getAtt[0] === table) return 'table';
    if (getAtt[0] === queue) return 'orders-queue';
    if (getAtt[0] === dlq) return 'dlq';
    if (getAtt[0] === ownLogGroup) return 'own-log-group';
    return `other:${getAtt[0]}`;
  }
  const join = resource?.['Fn::Join']?.[1];
  if (Array.isArray(join)) {
    if (join[0]?.['Fn::GetAtt']?.[0] === table && typeof join[1] === 'string' && join[1].startsWith('/index/')) return `index:${join[1].slice('/index/'.length)}`;
    const text = join.filter((part: unknown) => typeof part === 'string').join('');
    if (text.includes(':ses:') && text.endsWith(`:identity/${MAIL_FROM}`)) return 'ses-identity';
  }
  return `other:${JSON.stringify(resource)}`;
};

/** Every (action on resource) pair the function's role allows, from all policies attached to it. */
const grantsOf = (stage: Stage, id: string): { grants: Set<string>; statements: any[]; role: Resource } => {
  const { stack, resources } = synth[stage];
  const fn = functionOf(stage, id);
  const roleId = logicalId(stack, fn.role);
  const ownLogGroup = logicalId(stack, fn.logGroup);
  const statements = ofType(resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => (policy.Properties.Roles as any[]).some((role) => role.Ref === roleId))
    .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as any[]);
  const grants = new Set<string>();
  for (const statement of statements) {
    expect(statement.Effect).toBe('Allow');
    for (const action of [statement.Action].flat()) {
      for (const resource of [statement.Resource].flat()) grants.add(`${action} on ${describeResource(stage, resource, ownLogGroup)}`);
    }
  }
  return { grants, statements, role: resources[roleId] as Resource };
};

const BASE_GRANTS = ['logs:CreateLogStream on own-log-group', 'logs:PutLogEvents on own-log-group', 'xray:PutTelemetryRecords on *', 'xray:PutTraceSegments on *'];
const CONSUME_ACTIONS = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'];

/** What the manifest allows, written out independently of lib/function-specs.ts. */
const expectedRouteGrants = (route: (typeof routes)[number]) => {
  const access = route.access as { table: 'read' | 'write'; queue?: boolean; mail?: boolean };
  const table = access.table === 'write'
    ? ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'ConditionCheckItem']
    : ['GetItem', 'BatchGetItem', 'Query'];
  return new Set([
    ...BASE_GRANTS,
    ...table.map((action) => `dynamodb:${action} on table`),
    'dynamodb:Query on index:gsi1',
    // affiliates by tier (the tier_slug filter of the affiliates list)
    'dynamodb:Query on index:gsi3',
    ...(access.queue ? ['sqs:SendMessage on orders-queue'] : []),
    ...(access.mail ? ['ses:SendEmail on ses-identity'] : []),
  ]);
};

const expectedWorkerGrants = (worker: (typeof workers)[number]) => {
  const access = worker.access as { table: readonly string[]; indexes?: readonly string[]; queue?: 'send' | 'consume'; mail?: boolean };
  return new Set([
    ...BASE_GRANTS,
    ...access.table.map((action) => `dynamodb:${action} on table`),
    ...(access.indexes ?? []).map((index) => `dynamodb:Query on index:${index}`),
    ...(access.queue === 'send' ? ['sqs:SendMessage on orders-queue'] : []),
    ...(access.queue === 'consume' ? CONSUME_ACTIONS.map((action) => `${action} on orders-queue`) : []),
    ...(access.mail ? ['ses:SendEmail on ses-identity'] : []),
  ]);
};

describe.each(STAGES)('the %s stack', (stage) => {
  it('synthesizes with one Lambda function per route plus one per worker, and nothing else', () => {
    const { template } = synth[stage];
    template.resourceCountIs('AWS::Lambda::Function', routes.length + workers.length);
    template.hasOutput('ApiUrl', {});
    template.hasOutput('TableName', {});
  });

  it('gives every function the fixed defaults: Node.js 22 on arm64, ESM bundle, tracing, its own log group with retention', () => {
    const { resources, stack } = synth[stage];
    for (const fn of stack.functions) {
      const props = (resources[logicalId(stack, fn.fn)] as Resource).Properties;
      expect(props).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler', TracingConfig: { Mode: 'Active' } });
      expect(props.LoggingConfig.LogGroup).toEqual({ Ref: logicalId(stack, fn.logGroup) });
      expect((resources[logicalId(stack, fn.logGroup)] as Resource).Properties.RetentionInDays).toBeGreaterThan(0);
    }
  });

  it('integrates each route method with its own function', () => {
    const { resources, stack } = synth[stage];
    const methods = ofType(resources, 'AWS::ApiGateway::Method');
    expect(methods).toHaveLength(routes.length);
    const integrated = new Set<string>();
    for (const route of routes) {
      const matching = methods.filter(([, method]) => method.Properties.HttpMethod === route.method && resourcePath(resources, method.Properties.ResourceId) === route.path);
      expect(matching, `${route.method} ${route.path}`).toHaveLength(1);
      const [, method] = matching[0]!;
      expect(method.Properties.Integration.Type).toBe('AWS_PROXY');
      const target = JSON.stringify(method.Properties.Integration.Uri).match(/"Fn::GetAtt":\["([^"]+)","Arn"\]/)?.[1];
      expect(target, route.id).toBe(logicalId(stack, functionOf(stage, route.id).fn));
      expect((resources[target!] as Resource).Properties.Description).toMatch(new RegExp(`^${route.id}: `));
      integrated.add(target!);
    }
    expect(integrated.size).toBe(routes.length);
  });

  it('gives each role exactly what the manifest allows, no managed policies, and read routes no write action', () => {
    for (const route of routes) {
      const { grants, role } = grantsOf(stage, route.id);
      expect([...grants].sort(), route.id).toEqual([...expectedRouteGrants(route)].sort());
      expect(role.Properties.ManagedPolicyArns, route.id).toBeUndefined();
      const actions = [...grants].map((grant) => grant.split(' ')[0]);
      if (route.access.table === 'read') {
        expect(actions.filter((action) => action!.startsWith('dynamodb:') && !['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'].includes(action!)), route.id).toEqual([]);
      }
      if (!('queue' in route.access)) expect(actions.filter((action) => action!.startsWith('sqs:')), route.id).toEqual([]);
      if (!('mail' in route.access)) expect(actions.filter((action) => action!.startsWith('ses:')), route.id).toEqual([]);
    }
    for (const worker of workers) {
      const { grants, role } = grantsOf(stage, worker.id);
      expect([...grants].sort(), worker.id).toEqual([...expectedWorkerGrants(worker)].sort());
      expect(role.Properties.ManagedPolicyArns, worker.id).toBeUndefined();
    }
  });

  it('lets the mailers send only as the configured sender address', () => {
    for (const route of routes.filter((candidate) => 'mail' in candidate.access)) {
      const ses = grantsOf(stage, route.id).statements.filter((statement) => [statement.Action].flat().some((action: string) => action.startsWith('ses:')));
      expect(ses).toHaveLength(1);
      expect(ses[0].Condition).toEqual({ StringEquals: { 'ses:FromAddress': MAIL_FROM } });
    }
  });

  it('gives each function exactly the environment its imports need', () => {
    const { resources, stack } = synth[stage];
    for (const fn of stack.functions) {
      const variables = (resources[logicalId(stack, fn.fn)] as Resource).Properties.Environment.Variables as Record<string, unknown>;
      const expected = ['STAGE', 'TABLE_NAME'];
      const { spec } = fn;
      if (spec.access.queue === 'send') expected.push('ORDERS_QUEUE_URL');
      if (spec.access.mail) expected.push('MAIL_FROM', 'INVITE_LINK_BASE_URL');
      if (spec.kind === 'route') expected.push('AUTH_CACHE_TTL_SECONDS');
      if (spec.kind === 'worker') expected.push(...Object.keys(spec.worker.environment ?? {}));
      expect(Object.keys(variables).sort(), spec.id).toEqual(expected.sort());
      expect(variables.STAGE).toBe(stage);
    }
  });

  it('wires the orders queue to its DLQ (5 receives) and to the consumer with ReportBatchItemFailures', () => {
    const { template, resources, stack } = synth[stage];
    const dlq = logicalId(stack, stack.data.dlq);
    const queue = logicalId(stack, stack.data.queue);
    expect((resources[dlq] as Resource).Properties).toMatchObject({ QueueName: ordersDlqNameForStage(stage), SqsManagedSseEnabled: true });
    const queueProps = (resources[queue] as Resource).Properties;
    expect(queueProps).toMatchObject({
      QueueName: ordersQueueNameForStage(stage),
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 5 },
    });
    const consumer = functionOf(stage, 'commissions-process');
    expect(queueProps.VisibilityTimeout).toBeGreaterThanOrEqual(consumer.spec.timeoutSeconds * 6);
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] },
      FunctionName: { Ref: logicalId(stack, consumer.fn) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
    });
    // Both queues refuse plain HTTP.
    for (const target of [queue, dlq]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: target }],
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      });
    }
  });

  it('runs the outbox relay on an EventBridge schedule every minute', () => {
    const { template, stack } = synth[stage];
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(stack, functionOf(stage, 'outbox-relay').fn), 'Arn'] } })],
    });
  });

  it('builds the table from the shared definition: on demand, PITR, encrypted, protected on live', () => {
    const { resources, stack } = synth[stage];
    const table = resources[logicalId(stack, stack.data.table)] as Resource;
    expect(table.Properties).toMatchObject({
      TableName: tableNameForStage(stage),
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    });
    expect(table.Properties.GlobalSecondaryIndexes).toEqual(
      GLOBAL_INDEXES.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
    );
    if (stage === 'live') {
      expect(table.Properties.DeletionProtectionEnabled).toBe(true);
      expect(table.DeletionPolicy).toBe('Retain');
    } else {
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
      expect(table.DeletionPolicy).toBe('Delete');
    }
  });

  it('throttles the stage, writes access logs, maps unknown routes to a 404 envelope and rate-limits with AWS WAF', () => {
    const { template, stack } = synth[stage];
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: stage,
      TracingEnabled: true,
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue(), LoggingLevel: 'ERROR' })],
    });
    const notFound = template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: 'MISSING_AUTHENTICATION_TOKEN' } });
    const [response] = Object.values(notFound) as Resource[];
    expect(response?.Properties.StatusCode).toBe('404');
    expect(JSON.parse(response?.Properties.ResponseTemplates['application/json'])).toEqual({
      success: false,
      data: null,
      errors: { message: ['Not Found'] },
      meta: { trace_id: '$context.requestTime:api:$context.requestId' },
    });
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      Rules: [Match.objectLike({ Action: { Block: {} }, Statement: { RateBasedStatement: Match.objectLike({ AggregateKeyType: 'IP' }) } })],
    });
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [stack.getLogicalId(stack.restApi.webAcl), 'Arn'] },
      ResourceArn: { 'Fn::Join': ['', Match.arrayWith([{ Ref: stack.getLogicalId(stack.restApi.api.deploymentStage.node.defaultChild as CfnResource) }])] },
    });
  });

  it('alarms on API 5xx rate, p99 latency, each function\'s errors and throttles, and DLQ depth', () => {
    const { template, stack } = synth[stage];
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Resource[];
    const find = (predicate: (props: Record<string, any>) => boolean) => alarms.filter((alarm) => predicate(alarm.Properties));
    expect(find((props) => props.MetricName === '5XXError' && props.Statistic === 'Average')).toHaveLength(1);
    expect(find((props) => props.MetricName === 'Latency' && props.ExtendedStatistic === 'p99')).toHaveLength(1);
    for (const fn of stack.functions) {
      const dimension = [{ Name: 'FunctionName', Value: { Ref: logicalId(stack, fn.fn) } }];
      for (const metric of ['Errors', 'Throttles']) {
        expect(find((props) => props.MetricName === metric && JSON.stringify(props.Dimensions) === JSON.stringify(dimension)), `${fn.spec.id} ${metric}`).toHaveLength(1);
      }
    }
    const dlqAlarm = find((props) => props.MetricName === 'ApproximateNumberOfMessagesVisible');
    expect(dlqAlarm).toHaveLength(1);
    expect(dlqAlarm[0]?.Properties).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, stack.data.dlq), 'QueueName'] } }],
    });
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toHaveLength(1);
  });

  it('passes the cdk-nag AwsSolutions checks, every suppression with a written reason', () => {
    const { stack, resources } = synth[stage];
    const annotations = Annotations.fromStack(stack);
    expect(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
    expect(annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
    const suppressions = Object.values(resources).flatMap((resource) => (resource.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[]);
    expect(suppressions.length).toBeGreaterThan(0);
    for (const suppression of suppressions) expect(suppression.reason.length, suppression.id).toBeGreaterThan(40);
  });
});
