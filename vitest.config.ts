import { defineConfig } from 'vitest/config';

/**
 * Three levels of tests:
 * - unit: handlers and middleware against aws-sdk-client-mock, no I/O.
 * - integration: HTTP against a real local stack (DynamoDB Local, SQS and SES emulators) that
 *   global-setup starts once, in memory, on free ports. Files run one after another because they
 *   share the emulators' queues.
 * - infra: CDK template assertions.
 */
const unitEnv = {
  STAGE: 'live',
  TABLE_NAME: 'unit-table',
  ORDERS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders',
  ORDERS_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders-dlq',
  FOLLOW_UPS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-follow-ups',
  PARKED_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-parked',
  WEBHOOKS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-webhooks',
  WEBHOOKS_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-webhooks-dlq',
  WEBHOOKS_SLOW_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-webhooks-slow',
  WEBHOOK_SECRET_KEY: 'unit-webhook-key',
  // The handlers' tests count their own writes; the quota has its own tests (unit and integration).
  QUOTA_ENFORCEMENT: 'off',
  MAIL_FROM: 'affiliates@unit.test',
  INVITE_LINK_BASE_URL: 'https://dashboard.unit.test/invitations',
  AUTH_CACHE_TTL_SECONDS: '0',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'unit',
  AWS_SECRET_ACCESS_KEY: 'unit',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], env: unitEnv } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          fileParallelism: false,
          testTimeout: 30_000,
          hookTimeout: 60_000,
          env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
        },
      },
      { test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});
