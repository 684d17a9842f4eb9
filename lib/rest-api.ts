import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AccessLogField,
  AccessLogFormat,
  EndpointType,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  ResponseType,
  RestApi,
} from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';
import { Construct } from 'constructs';
import type { RouteDef } from '#functions/routes';
import { MAX_BODY_BYTES, MESSAGES } from '#shared/errors';
import { KEY_TRANSFORMATIONS, RATE_LIMIT } from '#shared/rate-limit';
import type { StageConfig } from './config';

export type MerchantRestApiProps = Pick<StageConfig, 'stage' | 'throttle' | 'wafIpRateLimit' | 'ownsApiGatewayAccount' | 'logRetention'> & {
  removalPolicy: RemovalPolicy;
};

/** Retry-After of a WAF rate-limit block (WAF re-evaluates a key's rate every few seconds). */
const WAF_RETRY_AFTER_SECONDS = 60;
/** The share of the API's requests X-Ray records (and with them every function they reach). */
export const TRACE_SAMPLING_RATE = 0.01;
/** Retry-After of a stage-throttling 429: the token bucket refills every second. */
const THROTTLE_RETRY_AFTER_SECONDS = 1;
const WAF_RESPONSE_BODY_KEY = 'too-many-attempts';
/** Every rule of the stage's WebACL, in priority order (the dashboard and the cost model count them). */
export const WAF_RULES = ['rate-limit-per-token', 'rate-limit-per-ip', 'body-too-large'] as const;

/** A regex for a decimal Content-Length of at least `bound`, a digit followed by zeros: WAF reads the header as text. */
export const atLeastPattern = (bound: number) => {
  const [lead, ...zeros] = String(bound);
  if (!lead || zeros.some((digit) => digit !== '0') || lead === '0') throw new Error(`Not a digit followed by zeros: ${bound}`);
  return `^0*([${lead}-9][0-9]{${zeros.length}}|[1-9][0-9]{${zeros.length + 1},})$`;
};

/** The V2 failure body of an answer made outside the functions: `message` is JSON text or a template expression giving it. */
const v2Error = (message: string, traceId: string) =>
  `{"success":false,"data":null,"errors":{"message":[${message}]},"meta":{"trace_id":"${traceId}"}}`;
/** The trace id of a response API Gateway makes itself (templates allow only variables): its request time and id. */
const gatewayError = (message: string) => v2Error(message, '$context.requestTime:api:$context.requestId');
/** The body of a WAF block: its responses are static, so the trace id is fixed (the access log finds the request). */
const wafBody = (message: string, suffix: string) => v2Error(JSON.stringify(message), `waf:api:${suffix}`);

/** The access log's fields, one JSON line per request (what the cost model prices): who asked what, the answer and its times. */
export const ACCESS_LOG_FIELDS = {
  requestId: AccessLogField.contextRequestId(),
  requestTime: AccessLogField.contextRequestTime(),
  ip: AccessLogField.contextIdentitySourceIp(),
  userAgent: AccessLogField.contextIdentityUserAgent(),
  method: AccessLogField.contextHttpMethod(),
  path: AccessLogField.contextPath(),
  status: AccessLogField.contextStatus(),
  responseLength: AccessLogField.contextResponseLength(),
  responseLatency: AccessLogField.contextResponseLatency(),
  integrationLatency: AccessLogField.contextIntegrationLatency(),
  errorMessage: AccessLogField.contextErrorMessage(),
  wafResponseCode: AccessLogField.contextWafResponseCode(),
};

/** The REST API of one stage: one method per route, each integrating its own function, behind stage throttling and AWS WAF. */
export class MerchantRestApi extends Construct {
  readonly api: RestApi;
  readonly webAcl: CfnWebACL;
  readonly accessLogs: LogGroup;
  readonly sampling: CfnSamplingRule;

  constructor(scope: Construct, id: string, props: MerchantRestApiProps) {
    super(scope, id);
    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    this.api = new RestApi(this, 'Api', {
      restApiName: `affiliate-merchant-api-${props.stage}`,
      description: `Affiliate Program Merchant API (${props.stage})`,
      endpointTypes: [EndpointType.REGIONAL],
      // The account-wide CloudWatch role: only the owning stack creates it, and keeps it so the other stage's logging does not break.
      cloudWatchRole: props.ownsApiGatewayAccount,
      ...(props.ownsApiGatewayAccount ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: props.stage,
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });

    // X-Ray samples TRACE_SAMPLING_RATE at any load, where the account's default traces every request of a quiet stage.
    this.sampling = new CfnSamplingRule(this, 'TraceSampling', {
      samplingRule: {
        ruleName: `merchant-api-${props.stage}`,
        priority: 100,
        fixedRate: TRACE_SAMPLING_RATE,
        reservoirSize: 0,
        serviceName: `${this.api.restApiName}/${props.stage}`,
        serviceType: 'AWS::ApiGateway::Stage',
        host: '*',
        httpMethod: '*',
        urlPath: '*',
        resourceArn: '*',
        version: 1,
      },
    });

    this.addGatewayResponses();
    this.webAcl = this.addWebAcl(props);
    new CfnWebACLAssociation(this, 'WebAclAssociation', {
      resourceArn: this.api.deploymentStage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }

  /** The V2 envelope on what API Gateway answers itself: 404 for an unknown route, 429 throttled, the rest with their status. */
  private addGatewayResponses() {
    const gatewayResponse = (id: string, type: ResponseType, statusCode: string | undefined, message: string, retryAfter?: number) =>
      this.api.addGatewayResponse(id, {
        type,
        statusCode,
        responseHeaders: { 'Content-Type': "'application/json'", ...(retryAfter ? { 'Retry-After': `'${retryAfter}'` } : {}) },
        templates: { 'application/json': gatewayError(message) },
      });
    const tooManyAttempts = JSON.stringify(MESSAGES.tooManyAttempts);
    // REST APIs answer an unknown path or method with 403 "Missing Authentication Token".
    gatewayResponse('NotFound', ResponseType.MISSING_AUTHENTICATION_TOKEN, '404', '"Not Found"');
    gatewayResponse('Throttled', ResponseType.THROTTLED, '429', tooManyAttempts, THROTTLE_RETRY_AFTER_SECONDS);
    // For a WAF block without a custom response of its own (a rule an operator adds in the console).
    gatewayResponse('RateLimited', ResponseType.WAF_FILTERED, '429', tooManyAttempts, WAF_RETRY_AFTER_SECONDS);
    // Anything else API Gateway answers itself keeps its status, in the V2 envelope.
    gatewayResponse('Default4xx', ResponseType.DEFAULT_4XX, undefined, '$context.error.messageString');
    gatewayResponse('Default5xx', ResponseType.DEFAULT_5XX, undefined, '"Server Error"');
  }

  /** AWS WAF: a rate-based rule per merchant token and one per client IP (429), and a bound on the body's size (413), in the V2 envelope. */
  private addWebAcl(props: MerchantRestApiProps): CfnWebACL {
    const metricName = `affiliate-merchant-api-${props.stage}`;
    const visibility = (suffix = '') => ({
      cloudWatchMetricsEnabled: true,
      metricName: `${metricName}${suffix}`,
      sampledRequestsEnabled: true,
    });
    /** A rule of WAF_RULES, at its place there, with its own metric. */
    const rule = (name: (typeof WAF_RULES)[number], action: CfnWebACL.RuleActionProperty, statement: CfnWebACL.StatementProperty) => ({
      name,
      priority: WAF_RULES.indexOf(name),
      action,
      statement,
      visibilityConfig: visibility(`-${name}`),
    });
    const block: CfnWebACL.RuleActionProperty = {
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: WAF_RESPONSE_BODY_KEY,
          responseHeaders: [{ name: 'Retry-After', value: String(WAF_RETRY_AFTER_SECONDS) }],
        },
      },
    };
    return new CfnWebACL(this, 'WebAcl', {
      name: metricName,
      description: `Rate limits per merchant token and per client IP, and a bound on the body size, for the ${props.stage} API`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(),
      customResponseBodies: {
        [WAF_RESPONSE_BODY_KEY]: { contentType: 'APPLICATION_JSON', content: wafBody(MESSAGES.tooManyAttempts, 'rate-limited') },
        'body-too-large': { contentType: 'APPLICATION_JSON', content: wafBody(MESSAGES.bodyTooLarge, 'body-too-large') },
      },
      rules: [
        // One budget per bearer token, the header normalized as authentication reads it (shared/rate-limit.ts).
        rule('rate-limit-per-token', block, {
          rateBasedStatement: {
            limit: RATE_LIMIT.requestsPer5Minutes,
            evaluationWindowSec: 300,
            aggregateKeyType: 'CUSTOM_KEYS',
            customKeys: [
              { header: { name: 'authorization', textTransformations: KEY_TRANSFORMATIONS.map((type, priority) => ({ priority, type })) } },
            ],
          },
        }),
        // What the per-token rule cannot key: requests without a token, floods of made-up tokens.
        rule('rate-limit-per-ip', block, {
          rateBasedStatement: { limit: props.wafIpRateLimit, aggregateKeyType: 'IP', evaluationWindowSec: 300 },
        }),
        // A body that might not reach a function whole (MAX_BODY_BYTES or more): 413, not API Gateway's 5xx.
        rule(
          'body-too-large',
          { block: { customResponse: { responseCode: 413, customResponseBodyKey: 'body-too-large' } } },
          {
            regexMatchStatement: {
              fieldToMatch: { singleHeader: { Name: 'content-length' } },
              regexString: atLeastPattern(MAX_BODY_BYTES),
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
        ),
      ],
    });
  }

  /** The route's method, on its path, integrated with its own function. */
  addRoute(route: RouteDef, fn: IFunction) {
    return this.api.root
      .resourceForPath(route.path)
      .addMethod(route.method, new LambdaIntegration(fn, { allowTestInvoke: false }), { operationName: route.id });
  }
}
