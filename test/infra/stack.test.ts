import type { CfnResource } from 'aws-cdk-lib';
import { App, Token } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '#functions/routes';
import { workers } from '#functions/workers';
import { EMAILS_FAILED_THRESHOLD, FEED_BEHIND_THRESHOLD_SECONDS } from '#lib/alarms';
import { buildApp } from '#lib/app';
import { missingAlarmDestination } from '#lib/config';
import type { MerchantApiStage } from '#lib/merchant-api-stage';
import { TRACE_SAMPLING_RATE } from '#lib/rest-api';
import { STAGES, type Stage } from '#shared/config';
import { GLOBAL_INDEXES, QUEUE_IDS, QUEUES, type QueueId, queueNameForStage, tableNameForStage } from '#shared/db/table-def';
import { MAX_BODY_BYTES, MESSAGES } from '#shared/errors';
import { acceptsIdempotencyKey } from '#shared/http/route';
import { METRIC, METRICS_NAMESPACE, METRICS_SERVICE } from '#shared/metric-names';
import { RATE_LIMIT } from '#shared/rate-limit';
import cdkJson from '../../cdk.json';

/**
 * The deployed shape, asserted on the synthesized templates of both stages. The app is built and
 * synthesized once (real esbuild bundling of every function), as `cdk synth` would.
 */

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; Metadata?: Record<string, any> };
type Synth = { stack: MerchantApiStage; template: Template; resources: Record<string, Resource> };

const MAIL_FROM = 'affiliates@infra-test.example';
const ALARM_EMAIL = 'ops@infra-test.example';
const BASE_CONTEXT = { ...cdkJson.context, mailFrom: MAIL_FROM, inviteLinkBaseUrl: 'https://dashboard.infra-test.example/invitations' };
const synth = {} as Record<Stage, Synth>;

beforeAll(() => {
  const app = new App({ context: { ...BASE_CONTEXT, alarmEmail: ALARM_EMAIL } });
  const stacks = buildApp(app);
  for (const stage of STAGES) {
    const template = Template.fromStack(stacks[stage]);
    synth[stage] = { stack: stacks[stage], template, resources: template.toJSON().Resources };
  }
}, 120_000);

const logicalId = (stack: MerchantApiStage, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnResource);

const ofType = (resources: Record<string, Resource>, type: string) =>
  Object.entries(resources).filter(([, resource]) => resource.Type === type);

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

/** The stage's webhook key (Secrets Manager). */
const webhookKeyOf = (stack: MerchantApiStage) => stack.node.findChild('WebhookKey') as Secret;

/** Reading the webhook key: what grantRead gives. */
const WEBHOOK_KEY_GRANTS = ['secretsmanager:DescribeSecret on webhook-key', 'secretsmanager:GetSecretValue on webhook-key'];

/** Describes an IAM resource as the kind of thing it is, so policies compare readably. */
const describeResource = (stage: Stage, resource: any, ownLogGroup: string): string => {
  const { stack } = synth[stage];
  const table = logicalId(stack, stack.data.table);
  const queues = new Map(QUEUE_IDS.map((id) => [logicalId(stack, stack.data.queues[id]), `queue:${id}`]));
  if (resource === '*') return '*';
  if (resource?.Ref !== undefined && resource.Ref === logicalId(stack, webhookKeyOf(stack))) return 'webhook-key';
  const getAtt = resource?.['Fn::GetAtt'];
  if (getAtt) {
    if (getAtt[0] === table) return getAtt[1] === 'StreamArn' ? 'table-stream' : 'table';
    if (queues.has(getAtt[0])) return queues.get(getAtt[0]) as string;
    if (getAtt[0] === ownLogGroup) return 'own-log-group';
    return `other:${getAtt[0]}`;
  }
  const join = resource?.['Fn::Join']?.[1];
  if (Array.isArray(join)) {
    if (join[0]?.['Fn::GetAtt']?.[0] === table && typeof join[1] === 'string' && join[1].startsWith('/index/'))
      return `index:${join[1].slice('/index/'.length)}`;
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
    // The quota statement is the only conditioned one: its items only (the quota partitions).
    const scope = statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ? ' (quota partitions)' : '';
    for (const action of [statement.Action].flat()) {
      for (const resource of [statement.Resource].flat())
        grants.add(`${action} on ${describeResource(stage, resource, ownLogGroup)}${scope}`);
    }
  }
  return { grants, statements, role: resources[roleId] as Resource };
};

const BASE_GRANTS = [
  'logs:CreateLogStream on own-log-group',
  'logs:PutLogEvents on own-log-group',
  'xray:PutTelemetryRecords on *',
  'xray:PutTraceSegments on *',
];
const STREAM_ACTIONS = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];
const CONSUME_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
];

/**
 * What the manifest allows, written out independently of lib/function-specs.ts: the route's own
 * table actions, plus authentication's GetItem (merchant) and Query on gsi1 (token by hash), and
 * on POST routes the Idempotency-Key records' GetItem, PutItem, UpdateItem.
 */
const expectedRouteGrants = (route: (typeof routes)[number]) => {
  const access = route.access as {
    table: readonly string[];
    indexes?: readonly string[];
    mail?: boolean;
    sends?: readonly QueueId[];
    webhookSecrets?: boolean;
  };
  return new Set([
    'dynamodb:UpdateItem on table (quota partitions)',
    ...(access.sends ?? []).map((queue) => `sqs:SendMessage on queue:${queue}`),
    ...(access.webhookSecrets ? WEBHOOK_KEY_GRANTS : []),
    ...BASE_GRANTS,
    'dynamodb:GetItem on table',
    ...(route.method === 'POST' ? ['dynamodb:PutItem on table', 'dynamodb:UpdateItem on table'] : []),
    ...access.table.map((action) => `${action} on table`),
    'dynamodb:Query on index:gsi1',
    // gsi3: affiliates by tier (the tier_slug filter of the affiliates list), a webhook endpoint's failed deliveries (recover)
    ...(access.indexes ?? []).map((index) => `dynamodb:Query on index:${index}`),
    ...(access.mail ? ['ses:SendEmail on ses-identity'] : []),
  ]);
};

const expectedWorkerGrants = (worker: (typeof workers)[number]) => {
  const access = worker.access as {
    table: readonly string[];
    indexes?: readonly string[];
    sends?: readonly QueueId[];
    mail?: boolean;
    webhookSecrets?: boolean;
  };
  const trigger = worker.trigger as { kind: string; queue?: QueueId; onFailure?: QueueId };
  return new Set([
    ...(access.webhookSecrets ? WEBHOOK_KEY_GRANTS : []),
    ...BASE_GRANTS,
    ...access.table.map((action) => `${action} on table`),
    ...(access.indexes ?? []).map((index) => `dynamodb:Query on index:${index}`),
    ...(access.sends ?? []).map((queue) => `sqs:SendMessage on queue:${queue}`),
    ...(trigger.kind === 'queue' ? CONSUME_ACTIONS.map((action) => `${action} on queue:${trigger.queue}`) : []),
    // The stream's event source mapping reads the stream; its on-failure destination is sent to by Lambda as the function.
    ...(trigger.kind === 'table-stream'
      ? [...STREAM_ACTIONS.map((action) => `${action} on table-stream`), 'dynamodb:ListStreams on *']
      : []),
    ...(trigger.kind === 'table-stream'
      ? [
          `sqs:SendMessage on queue:${trigger.onFailure}`,
          `sqs:GetQueueAttributes on queue:${trigger.onFailure}`,
          `sqs:GetQueueUrl on queue:${trigger.onFailure}`,
        ]
      : []),
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

  it('gives every function the fixed defaults: Node.js 22 on arm64, ESM bundle, tracing, its own log group with retention, JSON logs without the platform lines of each invocation', () => {
    const { resources, stack } = synth[stage];
    for (const fn of stack.functions) {
      const props = (resources[logicalId(stack, fn.fn)] as Resource).Properties;
      expect(props).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        // A request's functions trace as API Gateway's sampling rule decides; a triggered one only joins sampled traces.
        TracingConfig: { Mode: fn.spec.kind === 'route' ? 'Active' : 'PassThrough' },
      });
      expect(props.LoggingConfig).toEqual({
        LogGroup: { Ref: logicalId(stack, fn.logGroup) },
        LogFormat: 'JSON',
        // START and REPORT are INFO: a successful invocation writes only what the function logs.
        SystemLogLevel: 'WARN',
        ApplicationLogLevel: 'INFO',
      });
      expect((resources[logicalId(stack, fn.logGroup)] as Resource).Properties.RetentionInDays).toBeGreaterThan(0);
    }
  });

  it('integrates each route method with its own function', () => {
    const { resources, stack } = synth[stage];
    const methods = ofType(resources, 'AWS::ApiGateway::Method');
    expect(methods).toHaveLength(routes.length);
    const integrated = new Set<string>();
    for (const route of routes) {
      const matching = methods.filter(
        ([, method]) =>
          method.Properties.HttpMethod === route.method && resourcePath(resources, method.Properties.ResourceId) === route.path,
      );
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
      const actions = [...grants].filter((grant) => !grant.endsWith('(quota partitions)')).map((grant) => grant.split(' ')[0]);
      if (route.method === 'GET') {
        expect(
          actions.filter(
            (action) =>
              action!.startsWith('dynamodb:') && !['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'].includes(action!),
          ),
          route.id,
        ).toEqual([]);
      }
      if (!('sends' in route.access))
        expect(
          actions.filter((action) => action!.startsWith('sqs:')),
          route.id,
        ).toEqual([]);
      if (!('mail' in route.access))
        expect(
          actions.filter((action) => action!.startsWith('ses:')),
          route.id,
        ).toEqual([]);
    }
    for (const worker of workers) {
      const { grants, role } = grantsOf(stage, worker.id);
      expect([...grants].sort(), worker.id).toEqual([...expectedWorkerGrants(worker)].sort());
      expect(role.Properties.ManagedPolicyArns, worker.id).toBeUndefined();
    }
  });

  it('passes every request header (Idempotency-Key included) to the functions: proxy integrations, no header mapping, no CORS', () => {
    const { resources } = synth[stage];
    for (const [, method] of ofType(resources, 'AWS::ApiGateway::Method')) {
      expect(method.Properties.HttpMethod).not.toBe('OPTIONS');
      expect(method.Properties.Integration.Type).toBe('AWS_PROXY');
      expect(method.Properties.RequestParameters).toBeUndefined();
      expect(method.Properties.Integration.RequestParameters).toBeUndefined();
    }
  });

  it('lets every POST function claim and record idempotency keys (GetItem, PutItem, UpdateItem on the table)', () => {
    const posts = routes.filter((route) => acceptsIdempotencyKey(route));
    expect(posts.map((route) => route.id).sort()).toEqual(
      routes
        .filter((route) => route.method === 'POST')
        .map((route) => route.id)
        .sort(),
    );
    for (const route of posts) {
      const { grants } = grantsOf(stage, route.id);
      for (const action of ['GetItem', 'PutItem', 'UpdateItem'])
        expect(grants.has(`dynamodb:${action} on table`), `${route.id} ${action}`).toBe(true);
    }
  });

  it('lets DynamoDB expire idempotency records: TTL on expires_at', () => {
    const { resources, stack } = synth[stage];
    const table = resources[logicalId(stack, stack.data.table)] as Resource;
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expires_at', Enabled: true });
  });

  it('lets the mailers send only as the configured sender address', () => {
    for (const route of routes.filter((candidate) => 'mail' in candidate.access)) {
      const ses = grantsOf(stage, route.id).statements.filter((statement) =>
        [statement.Action].flat().some((action: string) => action.startsWith('ses:')),
      );
      expect(ses).toHaveLength(1);
      expect(ses[0].Condition).toEqual({ StringEquals: { 'ses:FromAddress': MAIL_FROM } });
    }
  });

  it('gives orders-update and orders-cancel one conditional UpdateItem beyond authentication (cancel, a POST: also its Idempotency-Key records); no ConditionCheckItem', () => {
    const dynamo = (id: string) =>
      [...grantsOf(stage, id).grants].filter((grant) => grant.startsWith('dynamodb:') && !grant.endsWith('(quota partitions)')).sort();
    expect(dynamo('orders-update')).toEqual(['dynamodb:GetItem on table', 'dynamodb:Query on index:gsi1', 'dynamodb:UpdateItem on table']);
    expect(dynamo('orders-cancel')).toEqual([
      'dynamodb:GetItem on table',
      'dynamodb:PutItem on table',
      'dynamodb:Query on index:gsi1',
      'dynamodb:UpdateItem on table',
    ]);
  });

  it('gives events-list Query on the table beyond authentication, nothing else: it reads the event log and its head, never writes', () => {
    const dynamo = [...grantsOf(stage, 'events-list').grants]
      .filter((grant) => grant.startsWith('dynamodb:') && !grant.endsWith('(quota partitions)'))
      .sort();
    expect(dynamo).toEqual(['dynamodb:GetItem on table', 'dynamodb:Query on index:gsi1', 'dynamodb:Query on table']);
  });

  it('gives each function exactly the environment its imports need', () => {
    const { resources, stack } = synth[stage];
    for (const fn of stack.functions) {
      const variables = (resources[logicalId(stack, fn.fn)] as Resource).Properties.Environment.Variables as Record<string, unknown>;
      const expected = ['STAGE', 'TABLE_NAME'];
      const { spec } = fn;
      for (const queue of spec.access.sends) expected.push(QUEUES[queue].envVar);
      if (spec.access.mail) expected.push('MAIL_FROM', 'INVITE_LINK_BASE_URL');
      if (spec.access.webhookSecrets) expected.push('WEBHOOK_KEY_SECRET_ARN');
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
    expect((resources[dlq] as Resource).Properties).toMatchObject({
      QueueName: queueNameForStage(stage, 'orders-dlq'),
      SqsManagedSseEnabled: true,
    });
    const queueProps = (resources[queue] as Resource).Properties;
    expect(queueProps).toMatchObject({
      QueueName: queueNameForStage(stage, 'orders'),
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 5 },
    });
    const consumer = functionOf(stage, 'commissions-process');
    expect(queueProps.VisibilityTimeout).toBeGreaterThanOrEqual(consumer.spec.timeoutSeconds * 6);
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', workers.length);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] },
      FunctionName: { Ref: logicalId(stack, consumer.fn) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
    });
    // Every queue refuses plain HTTP.
    for (const target of QUEUE_IDS.map((id) => logicalId(stack, stack.data.queues[id]))) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: target }],
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    }
  });

  it('feeds the change feed from the table stream (new and old images): bisecting, retrying up to the 24 h the stream keeps, reporting the failed record, parking a batch given up on', () => {
    const { template, resources, stack } = synth[stage];
    const table = logicalId(stack, stack.data.table);
    expect((resources[table] as Resource).Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [table, 'StreamArn'] },
      FunctionName: { Ref: logicalId(stack, functionOf(stage, 'change-feed').fn) },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      BisectBatchOnFunctionError: true,
      // Retried by time (no count), and given up while the stream still holds the records.
      MaximumRetryAttempts: Match.absent(),
      MaximumRecordAgeInSeconds: 20 * 60 * 60,
      ParallelizationFactor: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(stack, stack.data.queues.parked), 'Arn'] } } },
    });
  });

  it('invokes the change feed only for inserts and modifications of the item types it reacts to, and quota writes that took order numbers (event filtering)', () => {
    const { template, stack } = synth[stage];
    const table = logicalId(stack, stack.data.table);
    const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).find(
      (resource) => JSON.stringify(resource.Properties.EventSourceArn) === JSON.stringify({ 'Fn::GetAtt': [table, 'StreamArn'] }),
    );
    const filters = (mapping?.Properties.FilterCriteria.Filters ?? []) as { Pattern: string }[];
    const patterns = filters.map(({ Pattern }) => JSON.parse(Pattern));
    expect(patterns).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { NewImage: { type: { S: ['order', 'affiliate_request', 'invite', 'commission', 'list_count', 'counter'] } } },
      },
      { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { seq_taken: { BOOL: [true] } } } },
    ]);
  });

  it('feeds the follow-ups worker from the follow-ups queue, which parks a follow-up after 5 receives', () => {
    const { template, resources, stack } = synth[stage];
    const followUps = logicalId(stack, stack.data.queues['follow-ups']);
    expect((resources[followUps] as Resource).Properties).toMatchObject({
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack, stack.data.queues.parked), 'Arn'] }, maxReceiveCount: 5 },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [followUps, 'Arn'] },
      FunctionName: { Ref: logicalId(stack, functionOf(stage, 'follow-ups').fn) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it("caps the commission consumer at 100 at once, so a backlog never takes the account's concurrency from the API and the deliverers", () => {
    const { template, stack } = synth[stage];
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, stack.data.queues.orders), 'Arn'] },
      FunctionName: { Ref: logicalId(stack, functionOf(stage, 'commissions-process').fn) },
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 100 },
    });
  });

  it('feeds the webhook deliverer from the webhooks queue one message at a time (DLQ after 5 receives, alarmed, a stopped delivery back within twice its timeout), 50 at most at once', () => {
    const { template, resources, stack } = synth[stage];
    const webhooks = logicalId(stack, stack.data.queues.webhooks);
    const dlq = logicalId(stack, stack.data.queues['webhooks-dlq']);
    expect((resources[webhooks] as Resource).Properties).toMatchObject({
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 5 },
      VisibilityTimeout: 2 * functionOf(stage, 'webhooks-deliver').spec.timeoutSeconds,
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [webhooks, 'Arn'] },
      FunctionName: { Ref: logicalId(stack, functionOf(stage, 'webhooks-deliver').fn) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 50 },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq, 'QueueName'] } }],
    });
  });

  it('feeds the slow lane to deliverers of its own, 20 at most at once, with the same dead-letter queue, and lets the feed and both deliverers send to both lanes', () => {
    const { template, resources, stack } = synth[stage];
    const slow = logicalId(stack, stack.data.queues['webhooks-slow']);
    const dlq = logicalId(stack, stack.data.queues['webhooks-dlq']);
    expect((resources[slow] as Resource).Properties).toMatchObject({
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 5 },
      VisibilityTimeout: 2 * functionOf(stage, 'webhooks-deliver-slow').spec.timeoutSeconds,
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [slow, 'Arn'] },
      FunctionName: { Ref: logicalId(stack, functionOf(stage, 'webhooks-deliver-slow').fn) },
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 20 },
    });
    for (const id of ['change-feed', 'webhooks-deliver', 'webhooks-deliver-slow'] as const) {
      const { grants } = grantsOf(stage, id);
      expect([grants.has('sqs:SendMessage on queue:webhooks'), grants.has('sqs:SendMessage on queue:webhooks-slow')]).toEqual([true, true]);
    }
  });

  it("lets every route write the merchants' quota items, and nothing else with that grant (LeadingKeys M#*#QUOTA)", () => {
    const { template } = synth[stage];
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as Resource[];
    const quotaStatements = policies.flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as any[]).filter((statement) => statement.Sid === 'MerchantQuota'),
    );
    expect(quotaStatements).toHaveLength(routes.length);
    for (const statement of quotaStatements) {
      expect(statement).toMatchObject({
        Action: 'dynamodb:UpdateItem',
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['M#*#QUOTA'] } },
      });
    }
  });

  it('lets only the functions that seal or open webhook secrets read the webhook key', () => {
    const readers = synth[stage].stack.functions.filter((fn) => grantsOf(stage, fn.spec.id).grants.has(WEBHOOK_KEY_GRANTS[1] as string));
    expect(readers.map((fn) => fn.spec.id).sort()).toEqual([
      'webhooks-create',
      'webhooks-deliver',
      'webhooks-deliver-slow',
      'webhooks-rotate-secret',
    ]);
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

  it("records a fixed share of the stage's requests in X-Ray at any load, not the account default's every request of a quiet stage", () => {
    // Prepare
    const { template } = synth[stage];

    // Act
    const rules = Object.values(template.findResources('AWS::XRay::SamplingRule')) as Resource[];

    // Assess: one rule, on this stage's API stage (the entry point every function of a request follows)
    expect(rules).toHaveLength(1);
    expect(rules[0]?.Properties.SamplingRule).toEqual(
      expect.objectContaining({
        RuleName: `merchant-api-${stage}`,
        FixedRate: TRACE_SAMPLING_RATE,
        ReservoirSize: 0,
        ServiceName: `affiliate-merchant-api-${stage}/${stage}`,
        ServiceType: 'AWS::ApiGateway::Stage',
      }),
    );
  });

  it('throttles the stage, writes access logs, maps unknown routes to a 404 envelope and rate-limits with AWS WAF', () => {
    const { template, stack } = synth[stage];
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: stage,
      TracingEnabled: true,
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 4000, ThrottlingBurstLimit: 4000, LoggingLevel: 'ERROR' })],
    });
    const notFound = template.findResources('AWS::ApiGateway::GatewayResponse', {
      Properties: { ResponseType: 'MISSING_AUTHENTICATION_TOKEN' },
    });
    const [response] = Object.values(notFound) as Resource[];
    expect(response?.Properties.StatusCode).toBe('404');
    expect(JSON.parse(response?.Properties.ResponseTemplates['application/json'])).toEqual({
      success: false,
      data: null,
      errors: { message: ['Not Found'] },
      meta: { trace_id: '$context.requestTime:api:$context.requestId' },
    });
    const [webAcl] = Object.values(template.findResources('AWS::WAFv2::WebACL')) as Resource[];
    expect(webAcl?.Properties.Scope).toBe('REGIONAL');
    const rules = (webAcl?.Properties.Rules ?? []) as any[];
    expect(rules.map((rule) => rule.Name)).toEqual(['rate-limit-per-token', 'rate-limit-per-ip', 'body-too-large']);
    // What one token and one IP may send past WAF, per second, against the stage's shared bucket: an eighth and a quarter.
    const perSecond = rules
      .slice(0, 2)
      .map((rule) => rule.Statement.RateBasedStatement.Limit / rule.Statement.RateBasedStatement.EvaluationWindowSec);
    expect(perSecond).toEqual([500, 1000]);
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [stack.getLogicalId(stack.restApi.webAcl), 'Arn'] },
      ResourceArn: {
        'Fn::Join': [
          '',
          Match.arrayWith([{ Ref: stack.getLogicalId(stack.restApi.api.deploymentStage.node.defaultChild as CfnResource) }]),
        ],
      },
    });
  });

  it("alarms on API 5xx rate, p99 latency, each function's errors and throttles, and DLQ depth", () => {
    const { template, stack } = synth[stage];
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Resource[];
    const find = (predicate: (props: Record<string, any>) => boolean) => alarms.filter((alarm) => predicate(alarm.Properties));
    expect(find((props) => props.MetricName === '5XXError' && props.Statistic === 'Average')).toHaveLength(1);
    expect(find((props) => props.MetricName === 'Latency' && props.ExtendedStatistic === 'p99')).toHaveLength(1);
    for (const fn of stack.functions) {
      const dimension = [{ Name: 'FunctionName', Value: { Ref: logicalId(stack, fn.fn) } }];
      for (const metric of ['Errors', 'Throttles']) {
        expect(
          find((props) => props.MetricName === metric && JSON.stringify(props.Dimensions) === JSON.stringify(dimension)),
          `${fn.spec.id} ${metric}`,
        ).toHaveLength(1);
      }
    }
    const dlqAlarm = find(
      (props) =>
        props.MetricName === 'ApproximateNumberOfMessagesVisible' &&
        props.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0] === logicalId(stack, stack.data.dlq),
    );
    expect(dlqAlarm).toHaveLength(1);
    expect(dlqAlarm[0]?.Properties).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, stack.data.dlq), 'QueueName'] } }],
    });
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toHaveLength(1);
  });

  it('rate-limits each merchant token with a WAF rule keyed on the Authorization header, at RATE_LIMIT per 5 minutes', () => {
    const { template } = synth[stage];
    const [webAcl] = Object.values(template.findResources('AWS::WAFv2::WebACL')) as Resource[];
    const rules = webAcl?.Properties.Rules as any[];
    const perToken = rules.find((rule) => rule.Name === 'rate-limit-per-token');
    expect(perToken.Statement.RateBasedStatement).toEqual({
      Limit: RATE_LIMIT.requestsPer5Minutes,
      EvaluationWindowSec: 300,
      AggregateKeyType: 'CUSTOM_KEYS',
      // Lowercased, whitespace runs compressed: the spellings authentication accepts share one key.
      CustomKeys: [
        {
          Header: {
            Name: 'authorization',
            TextTransformations: [
              { Priority: 0, Type: 'LOWERCASE' },
              { Priority: 1, Type: 'COMPRESS_WHITE_SPACE' },
            ],
          },
        },
      ],
    });
    // The per-IP rule comes after it and sits well above one token's budget.
    const perIp = rules.find((rule) => rule.Name === 'rate-limit-per-ip');
    expect(perIp.Priority).toBeGreaterThan(perToken.Priority);
    expect(perIp.Statement.RateBasedStatement).toMatchObject({ AggregateKeyType: 'IP', EvaluationWindowSec: 300 });
    expect(perIp.Statement.RateBasedStatement.Limit).toBeGreaterThan(RATE_LIMIT.requestsPer5Minutes);
  });

  it('answers a rate-limit block with 429, Retry-After and the V2 envelope as JSON', () => {
    const { template } = synth[stage];
    const [webAcl] = Object.values(template.findResources('AWS::WAFv2::WebACL')) as Resource[];
    const bodies = webAcl?.Properties.CustomResponseBodies as Record<string, { ContentType: string; Content: string }>;
    for (const rule of ((webAcl?.Properties.Rules ?? []) as any[]).filter((rule) => rule.Statement.RateBasedStatement)) {
      const response = rule.Action.Block.CustomResponse;
      expect(response, rule.Name).toMatchObject({
        ResponseCode: 429,
        ResponseHeaders: [{ Name: 'Retry-After', Value: expect.stringMatching(/^\d+$/) }],
      });
      const body = bodies[response.CustomResponseBodyKey];
      expect(body?.ContentType).toBe('APPLICATION_JSON');
      expect(JSON.parse(body!.Content)).toEqual({
        success: false,
        data: null,
        errors: { message: ['Too Many Attempts.'] },
        meta: { trace_id: expect.stringMatching(/^[^:]+:api:[^:]+$/) },
      });
    }
  });

  it('refuses a body of MAX_BODY_BYTES or more by its Content-Length with 413 in the V2 envelope, before a function could be given it', () => {
    const { template } = synth[stage];
    const [webAcl] = Object.values(template.findResources('AWS::WAFv2::WebACL')) as Resource[];
    const rule = ((webAcl?.Properties.Rules ?? []) as any[]).find((candidate) => candidate.Name === 'body-too-large');
    const bodies = webAcl?.Properties.CustomResponseBodies as Record<string, { ContentType: string; Content: string }>;
    const { RegexString, ...statement } = rule.Statement.RegexMatchStatement;
    expect(statement).toEqual({
      FieldToMatch: { SingleHeader: { Name: 'content-length' } },
      TextTransformations: [{ Priority: 0, Type: 'NONE' }],
    });
    // The pattern matches exactly the Content-Lengths of MAX_BODY_BYTES and more.
    const pattern = new RegExp(RegexString);
    const lengths = [0, 1, 999_999, MAX_BODY_BYTES - 1, MAX_BODY_BYTES, MAX_BODY_BYTES + 1, 9_999_999, 10_000_000, 123_456_789];
    expect(lengths.filter((length) => pattern.test(String(length)))).toEqual(lengths.filter((length) => length >= MAX_BODY_BYTES));
    expect(pattern.test(`00${MAX_BODY_BYTES}`)).toBe(true);
    expect(pattern.test('')).toBe(false);
    expect(rule.Action.Block.CustomResponse.ResponseCode).toBe(413);
    const body = bodies[rule.Action.Block.CustomResponse.CustomResponseBodyKey];
    expect(body?.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body!.Content)).toMatchObject({ success: false, data: null, errors: { message: [MESSAGES.bodyTooLarge] } });
  });

  it('answers stage throttling (and any other WAF block) with 429, Retry-After and the V2 envelope', () => {
    const { template } = synth[stage];
    for (const type of ['THROTTLED', 'WAF_FILTERED']) {
      const [response] = Object.values(
        template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: type } }),
      ) as Resource[];
      expect(response?.Properties, type).toMatchObject({
        StatusCode: '429',
        ResponseParameters: {
          'gatewayresponse.header.Retry-After': expect.stringMatching(/^'\d+'$/),
          'gatewayresponse.header.Content-Type': "'application/json'",
        },
      });
      expect(JSON.parse(response?.Properties.ResponseTemplates['application/json'])).toEqual({
        success: false,
        data: null,
        errors: { message: ['Too Many Attempts.'] },
        meta: { trace_id: '$context.requestTime:api:$context.requestId' },
      });
    }
  });

  it('has a dashboard with the API, functions, queue, DLQ and business metrics of the stage', () => {
    const { template, stack } = synth[stage];
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as Resource[];
    expect(dashboards).toHaveLength(1);
    expect(dashboards[0]?.Properties.DashboardName).toBe(`affiliate-merchant-api-${stage}`);
    const body = JSON.stringify(dashboards[0]?.Properties.DashboardBody);
    for (const needle of [
      '"AWS/ApiGateway',
      '4XXError',
      '5XXError',
      'Latency',
      '"AWS/Lambda',
      'Errors',
      'Throttles',
      'ApproximateNumberOfMessagesVisible',
      'ApproximateAgeOfOldestMessage',
      'AWS/WAFV2',
      'BlockedRequests',
    ]) {
      expect(body, needle).toContain(needle);
    }
    for (const name of Object.values(METRIC)) expect(body, name).toContain(name);
    for (const rule of ['rate-limit-per-token', 'rate-limit-per-ip', 'body-too-large']) expect(body, rule).toContain(`Rule\\",\\"${rule}`);
    expect(body).toContain(METRICS_NAMESPACE);
    for (const queue of [stack.data.queue, stack.data.dlq]) expect(body).toContain(logicalId(stack, queue));
  });

  it("alarms on failed e-mails (the functions' EMF metrics), on a change feed behind its stream, and on anything parked", () => {
    const { template } = synth[stage];
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Resource[];
    const business = (name: string) =>
      alarms.filter((alarm) => alarm.Properties.Namespace === METRICS_NAMESPACE && alarm.Properties.MetricName === name);
    const dimensions = [
      { Name: 'service', Value: METRICS_SERVICE },
      { Name: 'stage', Value: stage },
    ];
    const [emails] = business(METRIC.emailsFailed);
    expect(emails?.Properties).toMatchObject({
      Statistic: 'Sum',
      Period: 300,
      Threshold: EMAILS_FAILED_THRESHOLD,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Dimensions: dimensions,
    });
    const lambdaAlarm = (name: string, functionId: string) =>
      alarms.find(
        (alarm) =>
          alarm.Properties.Namespace === 'AWS/Lambda' &&
          alarm.Properties.MetricName === name &&
          alarm.Properties.Dimensions?.[0]?.Value?.Ref === logicalId(synth[stage].stack, functionOf(stage, functionId).fn),
      );
    expect(lambdaAlarm('IteratorAge', 'change-feed')?.Properties).toMatchObject({
      Statistic: 'Maximum',
      Threshold: FEED_BEHIND_THRESHOLD_SECONDS * 1000,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    const parked = alarms.find(
      (alarm) =>
        alarm.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
        alarm.Properties.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0] ===
          logicalId(synth[stage].stack, synth[stage].stack.data.queues.parked),
    );
    expect(parked?.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
  });

  it("sends every alarm to the stage's topic, which the alarm e-mail is subscribed to", () => {
    const { template, stack } = synth[stage];
    const topic = { Ref: logicalId(stack, stack.alarms.topic) };
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Resource[]) {
      expect(alarm.Properties.AlarmActions).toEqual([topic]);
    }
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: ALARM_EMAIL, TopicArn: topic });
  });

  it('outputs an operator policy with exactly what seed and admin need: no more, and Query on gsi1 and gsi3 included', () => {
    const { template, stack } = synth[stage];
    const policies = Object.values(template.findResources('AWS::IAM::ManagedPolicy')) as Resource[];
    expect(policies).toHaveLength(1);
    const grants = new Set<string>();
    for (const statement of (policies[0]?.Properties.PolicyDocument.Statement ?? []) as any[]) {
      expect(statement.Effect).toBe('Allow');
      for (const action of [statement.Action].flat()) {
        for (const resource of [statement.Resource].flat()) grants.add(`${action} on ${describeResource(stage, resource, '')}`);
      }
      if ([statement.Action].flat().some((action: string) => action.startsWith('ses:'))) {
        expect(statement.Condition).toEqual({ StringEquals: { 'ses:FromAddress': MAIL_FROM } });
      }
    }
    expect([...grants].sort()).toEqual(
      [
        ...['GetItem', 'Query', 'PutItem', 'UpdateItem', 'BatchWriteItem'].map((action) => `dynamodb:${action} on table`),
        'dynamodb:Query on index:gsi1',
        'dynamodb:Query on index:gsi2',
        'dynamodb:Query on index:gsi3',
        'ses:SendEmail on ses-identity',
        ...['GetQueueUrl', 'GetQueueAttributes', 'StartMessageMoveTask', 'ReceiveMessage', 'DeleteMessage'].map(
          (action) => `sqs:${action} on queue:orders-dlq`,
        ),
        ...['GetQueueUrl', 'GetQueueAttributes', 'SendMessage'].map((action) => `sqs:${action} on queue:orders`),
        ...['GetQueueUrl', 'SendMessage'].flatMap((action) => [`sqs:${action} on queue:webhooks`, `sqs:${action} on queue:webhooks-slow`]),
        ...['GetQueueUrl', 'ReceiveMessage', 'ChangeMessageVisibility', 'DeleteMessage', 'SendMessage'].map(
          (action) => `sqs:${action} on queue:parked`,
        ),
        ...['GetQueueUrl', 'SendMessage'].map((action) => `sqs:${action} on queue:follow-ups`),
      ].sort(),
    );
    template.hasOutput('OperatorPolicyArn', { Value: { Ref: logicalId(stack, stack.operatorPolicy.policy as any) } });
  });

  it('passes the cdk-nag AwsSolutions checks, every suppression with a written reason', () => {
    const { stack, resources } = synth[stage];
    const annotations = Annotations.fromStack(stack);
    expect(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
    expect(annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
    const suppressions = Object.values(resources).flatMap(
      (resource) => (resource.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[],
    );
    expect(suppressions.length).toBeGreaterThan(0);
    for (const suppression of suppressions) expect(suppression.reason.length, suppression.id).toBeGreaterThan(40);
  });
});

/**
 * App-level settings, each on its own synth without bundling (`aws:cdk:bundling-stacks` empty:
 * the templates are the same, the function code is a placeholder), so they stay quick.
 */
describe('the app', () => {
  const build = (context: Record<string, unknown>) =>
    buildApp(new App({ context: { ...BASE_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } }));
  const errorsOf = (stack: MerchantApiStage) =>
    Annotations.fromStack(stack)
      .findError('*', Match.anyValue())
      .map((message) => String(message.entry.data));

  it('refuses to synthesize the live stage without an alarm destination, in one line; the sandbox may omit it', () => {
    expect(() => build({})).toThrow(missingAlarmDestination('live'));
    expect(missingAlarmDestination('live')).not.toContain('\n');
    expect(missingAlarmDestination('live')).toMatch(/-c alarmEmail=.*-c alarmTopicArn=/);
    // Given for the live stage only, the sandbox has none and synthesizes.
    const stacks = build({ 'live.alarmEmail': ALARM_EMAIL });
    expect(errorsOf(stacks.sandbox)).toEqual([]);
    expect(Object.keys(Template.fromStack(stacks.sandbox).findResources('AWS::SNS::Subscription'))).toEqual([]);
  });

  it('accepts an existing SNS topic as the live alarm destination and notifies it besides the stage topic', () => {
    const topicArn = 'arn:aws:sns:eu-west-1:123456789012:on-call';
    const stacks = build({ alarmTopicArn: topicArn });
    expect(errorsOf(stacks.live)).toEqual([]);
    const alarms = Object.values(Template.fromStack(stacks.live).findResources('AWS::CloudWatch::Alarm')) as Resource[];
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: expect.any(String) }, topicArn]);
  });

  it('refuses an alarm destination that is not an address or a topic ARN', () => {
    expect(() => build({ alarmEmail: 'not an address' })).toThrow(/alarmEmail must be an e-mail address/);
    expect(() => build({ alarmTopicArn: 'arn:aws:sqs:eu-west-1:123456789012:q' })).toThrow(/alarmTopicArn must be an SNS topic ARN/);
  });

  it('lets the triggered functions start traces of their own when the stage is told to (traceWorkers)', () => {
    const modes = (stack: MerchantApiStage) =>
      new Set(
        stack.functions
          .filter((fn) => fn.spec.kind === 'worker')
          .map((fn) => (Template.fromStack(stack).toJSON().Resources[logicalId(stack, fn.fn)] as Resource).Properties.TracingConfig.Mode),
      );
    const traced = build({ alarmEmail: ALARM_EMAIL, 'sandbox.traceWorkers': 'true' });
    expect([modes(traced.live), modes(traced.sandbox)]).toEqual([new Set(['PassThrough']), new Set(['Active'])]);
    expect(() => build({ alarmEmail: ALARM_EMAIL, traceWorkers: 'sometimes' })).toThrow(/traceWorkers must be true or false/);
  });

  it('lets only one stack own the account-wide API Gateway setting: live by default, the sandbox when told (own account)', () => {
    const count = (stack: MerchantApiStage) => Object.keys(Template.fromStack(stack).findResources('AWS::ApiGateway::Account')).length;
    const byDefault = build({ alarmEmail: ALARM_EMAIL });
    expect([count(byDefault.live), count(byDefault.sandbox)]).toEqual([1, 0]);
    const separateAccounts = build({ alarmEmail: ALARM_EMAIL, 'sandbox.apiGatewayAccount': 'true' });
    expect(count(separateAccounts.sandbox)).toBe(1);
  });

  it('bakes no region or account into the templates, whatever profile the CLI has (CDK_DEFAULT_*)', () => {
    const saved = { region: process.env.CDK_DEFAULT_REGION, account: process.env.CDK_DEFAULT_ACCOUNT };
    process.env.CDK_DEFAULT_REGION = 'ap-southeast-2';
    process.env.CDK_DEFAULT_ACCOUNT = '210987654321';
    try {
      const stacks = build({ alarmEmail: ALARM_EMAIL });
      for (const stack of Object.values(stacks)) {
        expect(Token.isUnresolved(stack.region)).toBe(true);
        expect(Token.isUnresolved(stack.account)).toBe(true);
        const json = JSON.stringify(Template.fromStack(stack).toJSON());
        expect(json).not.toContain('ap-southeast-2');
        expect(json).not.toContain('210987654321');
      }
      // Explicit context still pins them.
      expect(build({ alarmEmail: ALARM_EMAIL, account: '111122223333', region: 'eu-central-1' }).live.region).toBe('eu-central-1');
    } finally {
      if (saved.region === undefined) delete process.env.CDK_DEFAULT_REGION;
      else process.env.CDK_DEFAULT_REGION = saved.region;
      if (saved.account === undefined) delete process.env.CDK_DEFAULT_ACCOUNT;
      else process.env.CDK_DEFAULT_ACCOUNT = saved.account;
    }
  });
});
