import { createServer, type Server, type Socket } from 'node:net';
import { SendEmailCommand } from '@aws-sdk/client-ses';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '#local/apigw';
import { stageEnvironment } from '#local/stack';
import type { SeededMerchant } from '#shared/admin/seed';
import { apiEvent } from '#test/unit/support/api';
import { api, drainQueue, eventually, merchantFixture, orderBody, seedOne, stack } from './helpers';

/**
 * A dependency that accepts connections and never answers (an emulator
 * stopped, not refusing). Here a TCP server that accepts and stays silent stands in for it.
 * The create handler runs in this process with the live stage's environment except that SQS is
 * the hung server; DynamoDB is the stack's real one, so the order is really committed, and the
 * live stage's own change feed (real SQS) delivers its event from the table's stream.
 */
type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

let hung: Server;
let hungUrl: string;
const sockets = new Set<Socket>();
const savedEnv = { ...process.env };
let merchant: SeededMerchant;

const liveEnvironment = (overrides: Record<string, string>) => {
  const live = stack.stages.live;
  return {
    ...stageEnvironment('live', live, stack.endpoints),
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    AUTH_CACHE_TTL_SECONDS: '0',
    ...overrides,
  };
};

beforeAll(async () => {
  hung = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  hungUrl = `http://127.0.0.1:${(hung.address() as { port: number }).port}`;
  merchant = await seedOne(merchantFixture({ key: 'hung' }));
});

afterAll(async () => {
  process.env = savedEnv;
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => hung.close(resolve));
});

describe('with a hung SQS', () => {
  it('a create never waits on SQS (it sends nothing there): 201 for the committed order, whose event the change feed delivers', async () => {
    // Prepare
    await drainQueue(stack.stages.live.ordersQueueUrl);
    Object.assign(process.env, liveEnvironment({ AWS_ENDPOINT_URL_SQS: hungUrl }));
    vi.resetModules();
    const { handler } = (await import('#functions/orders/create')) as unknown as { handler: ApiHandler };
    const body = orderBody();

    // Act
    const response = await handler(apiEvent('orders-create', { token: merchant.tokens.live, body }), lambdaContext('orders-create'));

    // Assess: 201 with the order, which is stored and readable
    expect(response.statusCode).toBe(201);
    const uuid = JSON.parse(response.body).data.order.uuid as string;
    expect(sockets.size).toBe(0); // nothing on the request path went to SQS
    const stored = await api('live', merchant.tokens.live).get(`/api/v2/orders/${uuid}`);
    expect(stored.status).toBe(200);
    expect(stored.body.data.order.order_no).toBe(body.order_no);

    // Assess: the live stage's change feed (real SQS) delivers it, exactly once
    const delivered: { order_uuid: string }[] = [];
    await eventually(async () => {
      delivered.push(...(await drainQueue(stack.stages.live.ordersQueueUrl)).filter((message) => message.merchant_id === merchant.id));
      return delivered.length > 0 ? true : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 1500)); // more stream reads: no second copy
    delivered.push(...(await drainQueue(stack.stages.live.ordersQueueUrl)).filter((message) => message.merchant_id === merchant.id));
    expect(delivered.map((message) => message.order_uuid)).toEqual([uuid]);
  });
});

describe('every function SDK client', () => {
  it('gives up on a hung endpoint with a TimeoutError instead of waiting for it (DynamoDB, SQS, SES)', async () => {
    // Prepare: fresh client modules, every endpoint the hung server
    Object.assign(
      process.env,
      liveEnvironment({ AWS_ENDPOINT_URL_SQS: hungUrl, AWS_ENDPOINT_URL_DYNAMODB: hungUrl, AWS_ENDPOINT_URL_SES: hungUrl }),
    );
    vi.resetModules();
    const { ddb } = await import('#shared/db/client');
    const { sqs } = await import('#shared/queue/sqs-client');
    const { ses } = await import('#shared/mail/client');

    // Act
    const outcomes = await Promise.allSettled([
      ddb.send(new GetCommand({ TableName: 'hung', Key: { pk: 'x', sk: 'y' } })),
      sqs.send(new SendMessageCommand({ QueueUrl: stack.stages.live.ordersQueueUrl, MessageBody: '{}' })),
      ses.send(
        new SendEmailCommand({
          Source: 'a@example.com',
          Destination: { ToAddresses: ['b@example.com'] },
          Message: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } },
        }),
      ),
    ]);

    // Assess
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes) expect((outcome as PromiseRejectedResult).reason).toMatchObject({ name: 'TimeoutError' });
  });
});
