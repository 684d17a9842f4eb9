/**
 * One stage of the local stack, in its own process with that stage's environment (table, queue,
 * STAGE), the way each deployed stage has its own functions. Serves the route manifest over HTTP
 * through the very handlers that are deployed, runs the scheduled workers (outbox and notification relays), and runs the
 * commission consumer on the stage's orders queue (CONSUMER_POLL=off turns the consumer off).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { routes } from '#functions/routes';
import { queueWorkers, type WorkerDef, workers } from '#functions/workers';
import { currentStage, requireEnv } from '#shared/config';
import { asError } from '#shared/errors';
import { lambdaContext } from './apigw';
import { FaultSpecError, faultSpecRefused, faultsFromEnv } from './faults';
import { importHandler } from './handlers';
import { createApiServer } from './http';
import { enableInvocationScopes, InvocationStopped, invokeScoped } from './invocation-scope';
import { createRateLimiter, rateLimitFromEnv } from './rate-limit';
import { createSqsPoller, type SqsHandler } from './sqs-poller';
import { recordWritesFromEnv } from './write-recorder';

type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const stage = currentStage();
const port = Number(process.env.LOCAL_HTTP_PORT);
const relayIntervalMs = Number(process.env.RELAY_INTERVAL_MS ?? '5000');

// Nothing a request does may end this process: whatever escapes is logged and the stage serves on.
process.on('unhandledRejection', (error) => console.error(`[${stage}] unhandled rejection:`, error));
process.on('uncaughtException', (error) => console.error(`[${stage}] uncaught exception:`, error));

// Before any handler module loads: each invocation keeps its own Lambda context in the logger,
// and the functions' SDK clients get the faults of `npm start -- --faults` (local/faults.ts).
enableInvocationScopes();
const faults = faultsFromEnv();
// The bench's partition heat section records every call (LOCAL_RECORD_WRITES=on, local/write-recorder.ts).
recordWritesFromEnv();

const handlers = new Map<string, ApiHandler>();
for (const route of routes) handlers.set(route.id, await importHandler<ApiHandler>(route.handler));

const server = createApiServer({
  stage,
  routes,
  invoke: (route, event, context) => {
    const requestFaults = faults.takeRequestRules(event);
    if (requestFaults instanceof FaultSpecError) return Promise.resolve(faultSpecRefused(requestFaults));
    return invokeScoped(context, () => (handlers.get(route.id) as ApiHandler)(event, context), requestFaults);
  },
  rateLimiter: createRateLimiter(rateLimitFromEnv()),
  onError: (error) => {
    if (!(error instanceof InvocationStopped)) console.error(`[${stage}]`, error);
  },
});

// The scheduled workers (outbox and notification relays), on a timer instead of EventBridge.
type ScheduledHandler = (event: unknown, context: Context) => Promise<unknown>;
const allWorkers: readonly WorkerDef[] = workers;
const scheduled = await Promise.all(
  allWorkers
    .filter((worker) => worker.trigger.kind === 'schedule')
    .map(async (worker) => ({
      id: worker.id,
      timeoutSeconds: worker.timeoutSeconds,
      handler: await importHandler<ScheduledHandler>(worker.handler),
      running: false,
    })),
);
const relayTimer = setInterval(() => {
  for (const job of scheduled) {
    if (job.running) continue;
    job.running = true;
    const context = lambdaContext(job.id, job.timeoutSeconds);
    invokeScoped(context, () => job.handler({}, context))
      .catch((error: unknown) => console.error(`[${stage}] ${job.id}: ${asError(error).message}`))
      .finally(() => (job.running = false));
  }
}, relayIntervalMs);

// The commission consumer, fed the way its SQS event source mapping feeds it in AWS.
const [consumerDef] = queueWorkers();
const consumer =
  consumerDef && (process.env.CONSUMER_POLL ?? 'on') !== 'off'
    ? createSqsPoller({
        client: new SQSClient({ useQueueUrlAsEndpoint: false }),
        queueUrl: requireEnv('ORDERS_QUEUE_URL'),
        handler: await importHandler<SqsHandler>(consumerDef.handler),
        functionName: consumerDef.id,
        batchSize: consumerDef.trigger.batchSize,
        onError: (error) => console.error(`[${stage}] ${consumerDef.id}: ${error.message}`),
      })
    : undefined;
consumer?.start();

server.listen(port, '127.0.0.1', () => process.send?.({ ready: true, stage, port }));

const shutdown = () => {
  clearInterval(relayTimer);
  void consumer?.stop();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.on('disconnect', shutdown);
