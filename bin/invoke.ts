/** `npm run invoke -- <function-id> [event-file] [--stage live|sandbox]`: one handler run against `npm start` (`--help`). */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { functionSpecs } from '#lib/function-specs';
import { lambdaContext } from '#local/apigw';
import { localClientConfig, useLocalAwsEnv } from '#local/aws-env';
import { DEMO } from '#local/demo';
import { importHandler } from '#local/handlers';
import { runningDynamoDbEndpoint, runningStackPorts } from '#local/ports';
import { stageEnvironment } from '#local/stack';
import { parseStage } from '#shared/config';
import { QUEUE_IDS, type QueueId, queueNameForStage, tableNameForStage } from '#shared/db/table-def';
import { asError } from '#shared/errors';

const ROOT = resolve(import.meta.dirname, '..');

const fail = (message: string): never => {
  console.error(message);
  process.exit(1);
};

const specs = functionSpecs();
const usage = `usage: npm run invoke -- <function-id> [event-file] [--stage live|sandbox]\nfunctions: ${specs.map((spec) => spec.id).join(', ')}`;
/** What `make` returns, or its error's message, as `explain` words it, on stderr and exit code 1. */
const orFail = <T>(make: () => T, explain = (message: string) => message): T => {
  try {
    return make();
  } catch (error) {
    return fail(explain(asError(error).message));
  }
};
const parsed = orFail(
  () =>
    parseArgs({
      allowPositionals: true,
      options: { stage: { type: 'string', default: 'live' }, help: { type: 'boolean', short: 'h', default: false } },
    }),
  (message) => `${message}\n${usage}`,
);
const stage = orFail(() => parseStage(parsed.values.stage));
const [id, eventArg] = parsed.positionals;
if (parsed.values.help) {
  console.log(`${usage}

Invokes one function's handler in this process against the running local stack (npm start), with
the stage's environment, and prints {statusCode, headers, body} (a worker: its return value). The
event defaults to events/<function-id>.json; --stage sandbox swaps the demo's live token for its
sandbox token. Exit code 1 on a 5xx or a thrown error.`);
  process.exit(0);
}
if (!id) fail(usage);
const spec = specs.find((candidate) => candidate.id === id) ?? fail(`Unknown function "${id}".\n${usage}`);

const eventFile = resolve(eventArg ?? resolve(ROOT, 'events', `${spec.id}.json`));
let event: unknown = orFail(
  () => JSON.parse(readFileSync(eventFile, 'utf8')),
  (message) => `Cannot read the event ${eventFile}: ${message}`,
);

/** On sandbox, an event with the demo's live token (a 403 there) gets its sandbox token and stage name. */
function forSandbox(input: unknown): unknown {
  const apiEvent = input as Partial<Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders' | 'requestContext'>> | null;
  if (!apiEvent || typeof apiEvent !== 'object' || !apiEvent.requestContext) return input;
  const liveTokens = new Set<unknown>([`Bearer ${DEMO.tokens.live}`, `Bearer ${DEMO.tokens.liveNoOrders}`]);
  const swap = (value: string | undefined) => (liveTokens.has(value) ? `Bearer ${DEMO.tokens.sandbox}` : value);
  const { headers, multiValueHeaders } = apiEvent;
  for (const name of Object.keys(headers ?? {})) if (headers && name.toLowerCase() === 'authorization') headers[name] = swap(headers[name]);
  for (const [name, values] of Object.entries(multiValueHeaders ?? {}))
    if (multiValueHeaders && values && name.toLowerCase() === 'authorization') multiValueHeaders[name] = values.map(swap) as string[];
  apiEvent.requestContext.stage = 'sandbox';
  return apiEvent;
}

// The running local stack: its endpoints, the stage's table and the queue URLs as the emulator gives them.
useLocalAwsEnv();
const ports = runningStackPorts();
const endpoints = {
  dynamodb: runningDynamoDbEndpoint(),
  sqs: `http://127.0.0.1:${ports.sqs}`,
  ses: `http://127.0.0.1:${ports.ses}`,
};
const table = tableNameForStage(stage);
const reachStage = async () => {
  try {
    const { Table } = await new DynamoDBClient({ endpoint: endpoints.dynamodb, ...localClientConfig }).send(
      new DescribeTableCommand({ TableName: table }),
    );
    const sqs = new SQSClient({ endpoint: endpoints.sqs, useQueueUrlAsEndpoint: false, ...localClientConfig });
    const queueUrls = Object.fromEntries(
      await Promise.all(
        QUEUE_IDS.map(async (queue) => {
          const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueNameForStage(stage, queue) }));
          return [queue, QueueUrl ?? ''];
        }),
      ),
    ) as Record<QueueId, string>;
    return { table, streamArn: Table?.LatestStreamArn ?? '', queueUrls };
  } catch (error) {
    return fail(
      `The local stack is not reachable (DynamoDB ${endpoints.dynamodb}, SQS ${endpoints.sqs}): ${asError(error).message}\n${ports.recorded ? '' : 'No running `npm start` recorded its ports in .local/ports.json. '}Start it with \`npm start\` (or set the same port env as it uses).`,
    );
  }
};
Object.assign(process.env, stageEnvironment(stage, await reachStage(), endpoints));

if (stage === 'sandbox') event = forSandbox(event);

// Imported only now: handler modules read their environment at import, as in Lambda.
const handler = await importHandler<(event: unknown, context: unknown) => Promise<unknown>>(spec.handler);
let result: unknown;
try {
  result = await handler(event, lambdaContext(spec.id, spec.timeoutSeconds));
} catch (error) {
  console.error(error);
  fail(`${spec.id} threw (API Gateway would answer 502).`);
}

const parseBody = (body: unknown) => {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
};

if (spec.kind === 'route') {
  const response = result as { statusCode: number; headers?: Record<string, unknown>; body?: string };
  console.log(
    JSON.stringify({ statusCode: response.statusCode, headers: response.headers ?? {}, body: parseBody(response.body) }, null, 2),
  );
  process.exit(response.statusCode >= 500 ? 1 : 0);
} else {
  console.log(JSON.stringify(result ?? null, null, 2));
  process.exit(0);
}
