import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { NagSuppressions } from 'cdk-nag';
import type { MerchantFunction } from './merchant-function';

/** Every cdk-nag finding this app accepts, each with its reason, as narrowly as cdk-nag allows. */
export const suppressStageFindings = (functions: readonly MerchantFunction[], api: RestApi, webhookKey: Secret) => {
  NagSuppressions.addResourceSuppressions(webhookKey, [
    {
      id: 'AwsSolutions-SMG4',
      reason:
        'The webhook key seals secrets stored in the table; rotating it would make every sealed secret unreadable. Merchants rotate their own signing secrets (POST /api/v2/webhooks/{uuid}/rotate-secret); re-sealing under a new key is an operator procedure (docs/operations.md).',
    },
  ]);
  for (const fn of functions) {
    NagSuppressions.addResourceSuppressions(
      fn.role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            'X-Ray tracing (every function sends the segments of its sampled invocations) needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions; every other statement of the role names its resource.',
          appliesTo: ['Resource::*'],
        },
      ],
      true,
    );
    NagSuppressions.addResourceSuppressions(fn.fn, [
      {
        id: 'AwsSolutions-L1',
        reason:
          'Node.js 22 (LTS) is the runtime the project targets; Lambda supports it until 2027. Moving on is one constant, FUNCTION_RUNTIME in lib/merchant-function.ts.',
      },
    ]);
  }

  NagSuppressions.addResourceSuppressions(
    api,
    [
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Requests are validated in each function by the zod schema of its route, which must answer 422 with Laravel-style messages keyed by field (contract); API Gateway request validation would answer 400 in its own format first.',
      },
      {
        id: 'AwsSolutions-APIG4',
        reason:
          "Every route requires a bearer token, checked in the function (shared auth middleware): the contract needs 401/403 in the route's own envelope (V2 or legacy) and the token kind decides live vs sandbox; a Lambda authorizer would add a hop and change those responses.",
      },
      {
        id: 'AwsSolutions-IAM4',
        reason:
          'The account-level role API Gateway uses to write execution logs (APIG6): AmazonAPIGatewayPushToCloudWatchLogs is the AWS-maintained policy for exactly this service role, which must create API-Gateway-Execution-Logs_* groups whose names are only known at deploy time.',
        appliesTo: ['Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs'],
      },
      {
        id: 'AwsSolutions-COG4',
        reason: 'Merchants authenticate with API tokens issued by the merchant dashboard, not Cognito user pools; see AwsSolutions-APIG4.',
      },
    ],
    true,
  );
};
