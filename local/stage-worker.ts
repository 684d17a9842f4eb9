/**
 * One stage of the local stack, in its own process with that stage's environment (table, queue,
 * STAGE), the way each deployed stage has its own functions. Serves the route manifest over HTTP
 * through the very handlers that are deployed, runs the scheduled workers (outbox and notification relays), and runs the
 * commission consumer on the stage's orders queue (CONSUMER_POLL=off turns the consumer off).
 */
import { createServer } from 'node:http';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { routes } from '../functions/routes';
import { queueWorkers, workers, type WorkerDef } from '../functions/workers';
import { currentStage, requireEnv } from '../shared/config';
import { MESSAGES } from '../shared/http/errors';
import { v2Body } from '../shared/http/envelope';
import { newTraceId } from '../shared/http/trace';
import { buildEvent, compileRoutes, lambdaContext, matchRoute } from './apigw';
import { importHandler } from './handlers';
import { createSqsPoller, type SqsHandler } from './sqs-poller';

type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const stage = currentStage();
const port = Number(process.env.LOCAL_HTTP_PORT);
const relayIntervalMs = Number(process.env.RELAY_INTERVAL_MS ?? '5000');

const handlers = new Map<string, ApiHandler>();
for (const route of routes) handlers.set(route.id, await importHandler<ApiHandler>(route.handler));
const compiled = compileRoutes(routes);

const notFound = () => JSON.stringify(v2Body(newTraceId(), { errors: { message: [MESSAGES.notFound] } }));

const server = createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
  const match = matchRoute(compiled, request.method ?? 'GET', url.pathname);
  if (!match) {
    response.writeHead(404, { 'content-type': 'application/json' }).end(notFound());
    return;
  }
  const event = buildEvent({ request, url, route: match.route, params: match.params, body: Buffer.concat(chunks).toString('utf8'), stage });
  try {
    const result = await (handlers.get(match.route.id) as ApiHandler)(event, lambdaContext(match.route.id));
    response.writeHead(result.statusCode, result.headers as Record<string, string>).end(result.body);
  } catch (error) {
    // What API Gateway answers when the integration fails.
    console.error(error);
    response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Internal server error' }));
  }
});

// The scheduled workers (outbox and notification relays), on a timer instead of EventBridge.
type ScheduledHandler = (event: unknown, context: Context) => Promise<unknown>;
const scheduled = await Promise.all(
  (workers as readonly WorkerDef[])
    .filter((worker) => worker.trigger.kind === 'schedule')
    .map(async (worker) => ({ id: worker.id, handler: await importHandler<ScheduledHandler>(worker.handler), running: false })),
);
const relayTimer = setInterval(() => {
  for (const job of scheduled) {
    if (job.running) continue;
    job.running = true;
    job
      .handler({}, lambdaContext(job.id))
      .catch((error: unknown) => console.error(`[${stage}] ${job.id}: ${(error as Error).message}`))
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
