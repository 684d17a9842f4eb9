/**
 * Connection and request timeouts of every AWS SDK client (docs/design-notes.md, "Timeouts"). The
 * SDK sets none by default, so a dependency that accepts the connection and never answers (an
 * emulator stopped with SIGSTOP, a network black hole) would hold a request until API Gateway gave
 * up after 29 s, with a 500 for an order that had been saved.
 *
 * `connectionTimeout`: TCP (and TLS) connect. `requestTimeout` with `throwOnRequestTimeout`: the
 * whole attempt, from sending to the last byte of the answer (without `throwOnRequestTimeout`
 * this SDK version only logs a warning). A timed-out attempt is a TimeoutError, which the SDK's
 * standard retry mode retries like any transient error, up to `maxAttempts` in all.
 *
 * Budget: an API function has 10 s (its Lambda timeout; API Gateway's own limit is 29 s). One
 * call to a hung dependency must fail inside that, with room for what the request did before:
 *   DynamoDB  3 attempts x 2 s + backoff (< 0.5 s)  ~ 6.5 s  (a single-item call or a 5-item
 *             transaction takes milliseconds; 2 s is a hundred times its p99)
 *   SQS       3 attempts x 2 s + backoff            ~ 6.5 s  (the order create's send after its
 *             commit is capped lower still, see shared/queue/orders.ts)
 *   SES       2 attempts x 3 s + backoff            ~ 6.1 s  (SendEmail is slower than the others)
 * A connection in the same region takes well under 100 ms: 1 s leaves room for a cold TLS
 * handshake. Locally the emulators answer in milliseconds, well inside these bounds.
 *
 * The operator tools (seed, admin CLI, local stack set-up) run from a laptop, possibly far from
 * the region, and write in batches: more patient, still bounded.
 */

/**
 * The SDK caps a client at 50 sockets, and its connection timer starts when the request is made,
 * not when a socket is free: a call queued behind 50 others fails "did not establish a connection
 * within 1000 ms" without ever trying. A Lambda environment serves one invocation at a time and
 * never comes near 50; one process serving many invocations at once (`npm start`, where a stage's
 * functions share one process and its clients) does, and its calls failed for no fault of the
 * dependency. So the cap is far above anything one invocation uses, and only a dependency that
 * really does not answer times out.
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
