// Every AWS SDK client's timeouts (the SDK sets none): docs/design-notes.md, "Timeouts"; the operator tools wait longer.
/** Far above the SDK's 50 sockets, whose queue failed calls locally (docs/design-notes.md#performance-on-the-local-emulators). */
const MAX_SOCKETS = 1_000;

const timeouts = (connectionTimeout: number, requestTimeout: number) => ({
  connectionTimeout,
  requestTimeout,
  throwOnRequestTimeout: true as const,
  httpAgent: { maxSockets: MAX_SOCKETS },
  httpsAgent: { maxSockets: MAX_SOCKETS },
});

export const FUNCTION_CLIENT_CONFIG = {
  dynamodb: { requestHandler: timeouts(1_000, 2_000), maxAttempts: 3 },
  sqs: { requestHandler: timeouts(1_000, 2_000), maxAttempts: 3 },
  ses: { requestHandler: timeouts(1_000, 3_000), maxAttempts: 2 },
} as const;

export const OPERATOR_CLIENT_CONFIG = { requestHandler: timeouts(3_000, 15_000), maxAttempts: 3 } as const;
