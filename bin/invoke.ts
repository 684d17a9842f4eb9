/**
 * `npm run invoke -- <function-id> [event-file] [--stage live|sandbox]`
 *
 * Invokes one function's handler in this process against the running local stack (`npm start`),
 * with the stage's environment (table, queue, SES pointed at the emulators), and prints the
 * result: `{statusCode, headers, body}` (body parsed) for a route, the return value for a worker.
 * The event defaults to events/<function-id>.json. Ports follow the same env as `npm start`
 * (PORT, SANDBOX_PORT, SES_PORT, DYNAMODB_PORT, SQS_PORT).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { functionSpecs } from '../lib/function-specs';
import { lambdaContext } from '../local/apigw';
import { localClientConfig, useLocalAwsEnv } from '../local/emulators';
import { importHandler } from '../local/handlers';
import { portsFromEnv } from '../local/ports';
import { stageEnvironment } from '../local/stack';
import { parseStage } from '../shared/config';
import { ordersDlqNameForStage, ordersQueueNameForStage, tableNameForStage } from '../shared/db/table-def';

const ROOT = resolve(import.meta.dirname, '..');

const fail = (message: string): never => {
  console.error(message);
  process.exit(1);
};

const args = process.argv.slice(2);
const stageFlag = args.indexOf('--stage');
const stage = parseStage(stageFlag >= 0 ? args[stageFlag + 1] : 'live');
const positional = args.filter((arg, index) => !arg.startsWith('--') && (stageFlag < 0 || index !== stageFlag + 1));
const [id, eventArg] = positional;
const specs = functionSpecs();
const usage = `usage: npm run invoke -- <function-id> [event-file] [--stage live|sandbox]\nfunctions: ${specs.map((spec) => spec.id).join(', ')}`;
if (!id) fail(usage);
const spec = specs.find((candidate) => candidate.id === id) ?? fail(`Unknown function "${id}".\n${usage}`);

const eventFile = resolve(eventArg ?? resolve(ROOT, 'events', `${spec.id}.json`));
let event: unknown;
try {
  event = JSON.parse(readFileSync(eventFile, 'utf8'));
} catch (error) {
  fail(`Cannot read the event ${eventFile}: ${(error as Error).message}`);
}

// The running local stack: its endpoints, the stage's table and the queue URLs as the emulator gives them.
useLocalAwsEnv();
const ports = portsFromEnv();
const endpoints = { dynamodb: `http://127.0.0.1:${ports.dynamodb}`, sqs: `http://127.0.0.1:${ports.sqs}`, ses: `http://127.0.0.1:${ports.ses}` };
const table = tableNameForStage(stage);
let queues: { ordersQueueUrl: string; dlqUrl: string };
try {
  await new DynamoDBClient({ endpoint: endpoints.dynamodb, ...localClientConfig }).send(new DescribeTableCommand({ TableName: table }));
  const sqs = new SQSClient({ endpoint: endpoints.sqs, useQueueUrlAsEndpoint: false, ...localClientConfig });
  const queueUrl = async (QueueName: string) => (await sqs.send(new GetQueueUrlCommand({ QueueName }))).QueueUrl as string;
  queues = { ordersQueueUrl: await queueUrl(ordersQueueNameForStage(stage)), dlqUrl: await queueUrl(ordersDlqNameForStage(stage)) };
} catch (error) {
  fail(`The local stack is not reachable (DynamoDB ${endpoints.dynamodb}, SQS ${endpoints.sqs}): ${(error as Error).message}\nStart it with \`npm start\` (same port env as this command).`);
}
Object.assign(process.env, stageEnvironment(stage, { table, ...queues! }, endpoints));

// Imported only now: handler modules read their environment at import, as in Lambda.
const handler = await importHandler<(event: unknown, context: unknown) => Promise<unknown>>(spec.handler);
let result: unknown;
try {
  result = await handler(event, lambdaContext(spec.id));
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
  console.log(JSON.stringify({ statusCode: response.statusCode, headers: response.headers ?? {}, body: parseBody(response.body) }, null, 2));
  process.exit(response.statusCode >= 500 ? 1 : 0);
} else {
  console.log(JSON.stringify(result ?? null, null, 2));
  process.exit(0);
}
