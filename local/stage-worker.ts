/** One stage's process: the routes' handlers, the change feed (STREAM_POLL=off) and the queue consumers (CONSUMER_POLL=off: not the commission one). */
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { routes } from '#functions/routes';
import { queueWorkers, streamWorkers } from '#functions/workers';
import { currentStage, requireEnv } from '#shared/config';
import { QUEUES } from '#shared/db/table-def';
import { FaultSpecError, faultSpecRefused, faultsFromEnv } from './faults';
import { importHandler } from './handlers';
import { createApiServer } from './http';
import { enableInvocationScopes, InvocationStopped, invokeScoped } from './invocation-scope';
import { createRateLimiter, rateLimitFromEnv } from './rate-limit';
import { createSqsPoller, type SqsHandler } from './sqs-poller';
import { installStageHooks, STAGE_HOOKS_ENV } from './stage-hooks';
import { createStreamPoller, fileCheckpoints, type StreamHandler } from './stream-poller';

type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const stage = currentStage();
const port = Number(process.env.LOCAL_HTTP_PORT);

// Nothing a request does may end this process: whatever escapes is logged and the stage serves on.
process.on('unhandledRejection', (error) => console.error(`[${stage}] unhandled rejection:`, error));
process.on('uncaughtException', (error) => console.error(`[${stage}] uncaught exception:`, error));

// Before any handler module loads: per-invocation scopes, the faults, then the stage hooks.
enableInvocationScopes();
const faults = faultsFromEnv();
try {
  await installStageHooks();
} catch (error) {
  // Exiting before 'ready' makes the stack's start fail with this stage named.
  console.error(`[${stage}] could not install ${STAGE_HOOKS_ENV}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const handlers = new Map<string, ApiHandler>();
for (const route of routes) handlers.set(route.id, await importHandler<ApiHandler>(route.handler));

// Loaded after the faults are installed, like the handlers: it uses the functions' DynamoDB client.
const { serveWebhookInbox } = await import('./webhook-inbox');

const server = createApiServer({
  stage,
  invoke: (route, event, context) => {
    const requestFaults = faults.takeRequestRules(event);
    if (requestFaults instanceof FaultSpecError) return Promise.resolve(faultSpecRefused(requestFaults));
    return invokeScoped(context, () => (handlers.get(route.id) as ApiHandler)(event, context), requestFaults);
  },
  rateLimiter: createRateLimiter(rateLimitFromEnv()),
  pages: serveWebhookInbox,
  onError: (error) => {
    if (!(error instanceof InvocationStopped)) console.error(`[${stage}]`, error);
  },
});

// The queue consumers, fed the way their SQS event source mappings feed them in AWS (as many batches at once as their maximum concurrency).
const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
const consumers = await Promise.all(
  queueWorkers()
    .filter((worker) => worker.trigger.queue !== 'orders' || (process.env.CONSUMER_POLL ?? 'on') !== 'off')
    .map(async (worker) =>
      createSqsPoller({
        client: sqs,
        queueUrl: requireEnv(QUEUES[worker.trigger.queue].envVar),
        handler: await importHandler<SqsHandler>(worker.handler),
        functionName: worker.id,
        timeoutSeconds: worker.timeoutSeconds,
        batchSize: worker.trigger.batchSize,
        concurrency: worker.trigger.maxConcurrency,
        // The SQS emulator does not hand a waiting receive a message whose delay ends meanwhile: short
        // waits keep a webhook retry from arriving up to 20 s late.
        ...(worker.trigger.queue === 'webhooks' || worker.trigger.queue === 'webhooks-slow' ? { waitTimeSeconds: 1 } : {}),
        onError: (error) => console.error(`[${stage}] ${worker.id}: ${error.message}`),
      }),
    ),
);
for (const consumer of consumers) consumer.start();

// The change feed, fed from DynamoDB Local's stream the way its DynamoDB event source mapping feeds it in AWS.
const checkpointFile = process.env.LOCAL_STREAM_CHECKPOINTS;
const feeds = await Promise.all(
  streamWorkers()
    .filter(() => (process.env.STREAM_POLL ?? 'on') !== 'off')
    .map(async (worker) =>
      createStreamPoller({
        client: new DynamoDBStreamsClient({ endpoint: requireEnv('AWS_ENDPOINT_URL_DYNAMODB') }),
        streamArn: requireEnv('TABLE_STREAM_ARN'),
        handler: await importHandler<StreamHandler>(worker.handler),
        functionName: worker.id,
        timeoutSeconds: worker.timeoutSeconds,
        batchSize: worker.trigger.batchSize,
        maxRetryAttempts: worker.trigger.retryAttempts,
        filterPatterns: worker.trigger.filterPatterns,
        ...(checkpointFile ? { checkpoints: fileCheckpoints(checkpointFile) } : {}),
        // As Lambda does with an on-failure destination: the batch's description goes to the queue.
        onBatchDiscarded: async (record) => {
          await sqs.send(
            new SendMessageCommand({ QueueUrl: requireEnv(QUEUES[worker.trigger.onFailure].envVar), MessageBody: JSON.stringify(record) }),
          );
        },
        onError: (error) => console.error(`[${stage}] ${worker.id}: ${error.message}`),
      }),
    ),
);
for (const feed of feeds) feed.start();

server.listen(port, '127.0.0.1', () => process.send?.({ ready: true, stage, port }));

const shutdown = () => {
  for (const poller of [...consumers, ...feeds]) void poller.stop();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.on('disconnect', shutdown);
