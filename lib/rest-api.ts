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
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { RouteDef } from '../functions/routes';
import type { Stage } from '../shared/config';

export type MerchantRestApiProps = {
  stage: Stage;
  throttle: { rateLimit: number; burstLimit: number };
  wafRateLimit: number;
  logRetention: RetentionDays;
  removalPolicy: RemovalPolicy;
};

/**
 * The trace id of a response API Gateway makes itself. Gateway response templates allow only
 * variable substitution (no VTL), so the date part is API Gateway's request time
 * (`22/Nov/2026:06:01:02 +0000`) and the suffix its request id, the key of the access log line.
 */
export const GATEWAY_TRACE_ID = '$context.requestTime:api:$context.requestId';

const v2Error = (message: string) =>
  `{"success":false,"data":null,"errors":{"message":[${message}]},"meta":{"trace_id":"${GATEWAY_TRACE_ID}"}}`;

/**
 * The REST API of one stage: one method per route, each integrating its own function; stage
 * throttling; JSON access logs; the V2 envelope on the responses API Gateway makes itself (404 for
 * an unknown route or method, 429 when throttled or rate-limited); AWS WAF with a rate-based rule.
 */
export class MerchantRestApi extends Construct {
  readonly api: RestApi;
  readonly webAcl: CfnWebACL;
  readonly accessLogs: LogGroup;

  constructor(scope: Construct, id: string, props: MerchantRestApiProps) {
    super(scope, id);
    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    this.api = new RestApi(this, 'Api', {
      restApiName: `affiliate-merchant-api-${props.stage}`,
      description: `Affiliate Program Merchant API (${props.stage})`,
      endpointTypes: [EndpointType.REGIONAL],
      // Execution logs (ERROR level) need the account's API Gateway CloudWatch role; both stages set
      // the same account setting, so the role is kept when a stack is deleted.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: props.stage,
        throttlingRateLimit: props.throttle.rateLimit,
        throttlingBurstLimit: props.throttle.burstLimit,
        loggingLevel: MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: true,
        tracingEnabled: true,
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            extendedRequestId: AccessLogField.contextExtendedRequestId(),
            requestTime: AccessLogField.contextRequestTime(),
            ip: AccessLogField.contextIdentitySourceIp(),
            userAgent: AccessLogField.contextIdentityUserAgent(),
            method: AccessLogField.contextHttpMethod(),
            resourcePath: AccessLogField.contextResourcePath(),
            path: AccessLogField.contextPath(),
            protocol: AccessLogField.contextProtocol(),
            status: AccessLogField.contextStatus(),
            responseLength: AccessLogField.contextResponseLength(),
            responseLatency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            integrationStatus: AccessLogField.contextIntegrationStatus(),
            errorType: AccessLogField.contextErrorResponseType(),
            errorMessage: AccessLogField.contextErrorMessage(),
            wafResponseCode: AccessLogField.contextWafResponseCode(),
            xrayTraceId: AccessLogField.contextXrayTraceId(),
          }),
        ),
      },
    });

    const gatewayResponse = (id: string, type: ResponseType, statusCode: string | undefined, message: string) =>
      this.api.addGatewayResponse(id, {
        type,
        statusCode,
        responseHeaders: { 'Content-Type': "'application/json'" },
        templates: { 'application/json': v2Error(message) },
      });
    // REST APIs answer an unknown path or method with 403 "Missing Authentication Token".
    gatewayResponse('NotFound', ResponseType.MISSING_AUTHENTICATION_TOKEN, '404', '"Not Found"');
    gatewayResponse('Throttled', ResponseType.THROTTLED, '429', '"Too Many Attempts."');
    // The WebACL's only blocking rule is the rate limit.
    gatewayResponse('RateLimited', ResponseType.WAF_FILTERED, '429', '"Too Many Attempts."');
    // Anything else API Gateway answers itself keeps its status, in the V2 envelope.
    gatewayResponse('Default4xx', ResponseType.DEFAULT_4XX, undefined, '$context.error.messageString');
    gatewayResponse('Default5xx', ResponseType.DEFAULT_5XX, undefined, '"Server Error"');

    const metricName = `affiliate-merchant-api-${props.stage}`;
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: metricName,
      description: `Rate-based protection for the ${props.stage} API`,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: { cloudWatchMetricsEnabled: true, metricName, sampledRequestsEnabled: true },
      rules: [
        {
          name: 'rate-limit-per-ip',
          priority: 0,
          action: { block: {} },
          statement: { rateBasedStatement: { limit: props.wafRateLimit, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
          visibilityConfig: { cloudWatchMetricsEnabled: true, metricName: `${metricName}-rate-limit`, sampledRequestsEnabled: true },
        },
      ],
    });
    new CfnWebACLAssociation(this, 'WebAclAssociation', {
      resourceArn: this.api.deploymentStage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }

  /** The route's method, on its path, integrated with its own function. */
  addRoute(route: RouteDef, fn: IFunction) {
    return this.api.root
      .resourceForPath(route.path)
      .addMethod(route.method, new LambdaIntegration(fn, { allowTestInvoke: false }), { operationName: route.id });
  }
}
