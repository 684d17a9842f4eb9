/**
 * Connection and request timeouts of every AWS SDK client: the SDK sets none, so a dependency that
 * accepts the connection and never answers would hold a request until API Gateway gave up after
 * 29 s. A timed-out attempt throws a TimeoutError (`throwOnRequestTimeout`), which the standard
 * retry mode retries; each budget fits an API function's 10 s. The budgets, and why, are in
 * docs/design-notes.md, "Timeouts"; the operator tools, run from afar and in batches, wait longer.
 */

/**
 * The SDK caps a client at 50 sockets and starts its connection timer when the call is made, not when
 * a socket is free: locally, where a stage's functions share one process, a call queued behind a burst
 * failed without trying. So the cap is far above anything one invocation uses
 * (docs/design-notes.md#performance-on-the-local-emulators).
 */
const MAX_SOCKETS = 1_000;

type HandlerConfig = {
  connectionTimeout: number;
  requestTimeout: number;
  throwOnRequestTimeout: true;
  httpAgent: { maxSockets: number };
  httpsAgent: { maxSockets: number };
};

const timeouts = (connectionTimeout: number, requestTimeout: number): HandlerConfig => ({
  connectionTimeout,
  requestTimeout,
  throwOnRequestTimeout: true,
  httpAgent: { maxSockets: MAX_SOCKETS },
  httpsAgent: { maxSockets: MAX_SOCKETS },
});

export const FUNCTION_CLIENT_CONFIG = {
  dynamodb: { requestHandler: timeouts(1_000, 2_000), maxAttempts: 3 },
  sqs: { requestHandler: timeouts(1_000, 2_000), maxAttempts: 3 },
  ses: { requestHandler: timeouts(1_000, 3_000), maxAttempts: 2 },
} as const;

export const OPERATOR_CLIENT_CONFIG = { requestHandler: timeouts(3_000, 15_000), maxAttempts: 3 } as const;
