/**
 * The local stack's fault injection (local/faults.ts): the emulators never throttle, never cancel a
 * transaction for a conflict and never lose an answer, so `npm start -- --faults` throws what AWS
 * would, at the SDK boundary. Here the SDK client is real and its transport a stub that counts the
 * requests reaching "the service": no I/O.
 */
import {
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandInput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { HttpResponse } from '@smithy/core/protocols';
import { describe, expect, it } from 'vitest';
import { createInjector, type FaultRule, FaultSpecError, injectFaults, parseFaultSpec } from '#local/faults';
import { classifyDependencyError } from '#shared/dependency-errors';

const REQUEST_TIMEOUT_MS = 5;
const KEY = { pk: { S: 'M#m-1' }, sk: { S: 'ORDER#o-1' } };

/** A DynamoDBClient whose transport answers every request `{}` (200), with the faults of `spec`; `reached` counts what got through. */
const faultyDynamoDb = (spec: string, options: { rulesOf?: () => FaultRule[] | undefined } = {}) => {
  const reached: string[] = [];
  const client = new DynamoDBClient({
    region: 'us-east-1',
    credentials: { accessKeyId: 'unit', secretAccessKey: 'unit' },
    // One attempt per call: what a fault does to each attempt shows directly.
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: { headers: Record<string, string> }) => {
        reached.push(String(request.headers['x-amz-target']).replace('DynamoDB_20120810.', ''));
        return {
          response: new HttpResponse({
            statusCode: 200,
            headers: { 'content-type': 'application/x-amz-json-1.0' },
            body: Buffer.from('{}'),
          }),
        };
      },
    },
  });
  const injector = createInjector(spec, 1);
  injectFaults(client, 'dynamodb', injector, { requestTimeoutMs: REQUEST_TIMEOUT_MS, rulesOf: options.rulesOf });
  return { client, reached, injector };
};

/** A transaction of `parts` puts. */
const transaction = (parts: number): TransactWriteItemsCommandInput => ({
  TransactItems: Array.from({ length: parts }, (_, index) => ({
    Put: { TableName: 'unit-table', Item: { pk: { S: 'M#m-1' }, sk: { S: `ORDER#o-${index}` } } },
  })),
});

const failureOf = async (call: Promise<unknown>): Promise<Record<string, unknown>> => {
  try {
    await call;
  } catch (error) {
    return error as Record<string, unknown>;
  }
  throw new Error('expected the call to fail');
};

describe('parseFaultSpec', () => {
  it('refuses an operation its service does not have, naming the spelling it has, since such a rule could never fire', () => {
    expect(() => parseFaultSpec('dynamodb.Frobnicate:throttle=5%')).toThrow('dynamodb has no operation "Frobnicate"');
    expect(() => parseFaultSpec('dynamodb.putitem:lost')).toThrow('(did you mean PutItem?)');
    expect(
      parseFaultSpec('dynamodb.TransactWriteItems:conflict,sqs.SendMessageBatch:refuse,ses.SendEmail:throttle,dynamodb.write:lost'),
    ).toHaveLength(4);
  });

  it.each([
    ['dynamodb:throttle=5%', { service: 'dynamodb', operation: undefined, fault: 'throttle', probability: 0.05, remaining: Infinity }],
    [
      'dynamodb.TransactWriteItems:conflict=0.01',
      { service: 'dynamodb', operation: 'TransactWriteItems', fault: 'conflict', probability: 0.01, remaining: Infinity },
    ],
    ['sqs.SendMessage:refuse=100%x2', { service: 'sqs', operation: 'SendMessage', fault: 'refuse', probability: 1, remaining: 2 }],
    ['dynamodb.write:lost=2%', { service: 'dynamodb', operation: 'write', fault: 'lost', probability: 0.02, remaining: Infinity }],
    ['ses:unavailable', { service: 'ses', operation: undefined, fault: 'unavailable', probability: 1, remaining: Infinity }],
    [
      'dynamodb.PutItem:stop=100%+1',
      { service: 'dynamodb', operation: 'PutItem', fault: 'stop', probability: 1, remaining: Infinity, skip: 1 },
    ],
  ])('reads %s', (spec, rule) => {
    // Act
    const rules = parseFaultSpec(spec);

    // Assess
    expect(rules).toEqual([{ text: spec, ...rule }]);
  });

  it('reads several comma-separated rules, spaces around them allowed', () => {
    // Act
    const rules = parseFaultSpec(' dynamodb:throttle=5%, dynamodb.write:conflict=1% ,sqs:hang=0.5x1 ');

    // Assess
    expect(rules.map((rule) => [rule.text, rule.fault, rule.probability, rule.remaining])).toEqual([
      ['dynamodb:throttle=5%', 'throttle', 0.05, Infinity],
      ['dynamodb.write:conflict=1%', 'conflict', 0.01, Infinity],
      ['sqs:hang=0.5x1', 'hang', 0.5, 1],
    ]);
  });

  it.each(['none', '', '  '])('reads %j as no rule', (spec) => {
    // Act
    const rules = parseFaultSpec(spec);

    // Assess
    expect(rules).toEqual([]);
  });

  it.each([
    ['an unknown service', 'dynamo:throttle=5%'],
    ['an unknown fault', 'dynamodb:explode=5%'],
    ['a probability over 100%', 'dynamodb:throttle=150%'],
    ['a probability over 1', 'dynamodb:throttle=1.5'],
    ['a probability that is no number', 'dynamodb:throttle=1.2.3'],
    ['no fault', 'dynamodb'],
    ['an empty probability', 'dynamodb:throttle='],
    ['a count that is no number', 'dynamodb:throttle=5%xtwo'],
  ])('refuses %s with a FaultSpecError naming the rule', (_label, bad) => {
    // Act
    const parse = () => parseFaultSpec(`sqs:refuse=1%,${bad}`);

    // Assess
    expect(parse).toThrow(FaultSpecError);
    expect(parse).toThrow(`"${bad}"`);
  });
});

describe('injectFaults on a DynamoDB client', () => {
  it('throttle on TransactWriteItems: a TransactionCanceledException with one reason per item, one of them throttling, and nothing reaches the table', async () => {
    // Prepare
    const { client, reached } = faultyDynamoDb('dynamodb.TransactWriteItems:throttle');

    // Act
    const error = await failureOf(client.send(new TransactWriteItemsCommand(transaction(3))));

    // Assess
    expect(error.name).toBe('TransactionCanceledException');
    const codes = (error.CancellationReasons as { Code: string }[]).map((reason) => reason.Code);
    expect(codes).toHaveLength(3);
    expect(codes.filter((code) => code === 'None')).toHaveLength(2);
    expect(codes.find((code) => code !== 'None')).toMatch(/^(ThrottlingError|ProvisionedThroughputExceeded)$/);
    expect(classifyDependencyError(error)).toBe('throttled');
    expect(reached).toEqual([]);
  });

  it('throttle on a single-item write: ProvisionedThroughputExceededException or ThrottlingException', async () => {
    // Prepare
    const { client } = faultyDynamoDb('dynamodb.PutItem:throttle');

    // Act
    const error = await failureOf(client.send(new PutItemCommand({ TableName: 'unit-table', Item: KEY })));

    // Assess
    expect(error.name).toMatch(/^(ProvisionedThroughputExceededException|ThrottlingException)$/);
    expect(classifyDependencyError(error)).toBe('throttled');
  });

  it('conflict on TransactWriteItems: a TransactionCanceledException with a TransactionConflict reason', async () => {
    // Prepare
    const { client } = faultyDynamoDb('dynamodb.TransactWriteItems:conflict');

    // Act
    const error = await failureOf(client.send(new TransactWriteItemsCommand(transaction(2))));

    // Assess
    expect(error.name).toBe('TransactionCanceledException');
    expect((error.CancellationReasons as { Code: string }[]).map((reason) => reason.Code).sort()).toEqual(['None', 'TransactionConflict']);
    expect(classifyDependencyError(error)).toBe('conflict');
  });

  it('conflict on UpdateItem: a TransactionConflictException, and nothing reaches the table', async () => {
    // Prepare
    const { client, reached } = faultyDynamoDb('dynamodb.UpdateItem:conflict');

    // Act
    const error = await failureOf(
      client.send(
        new UpdateItemCommand({
          TableName: 'unit-table',
          Key: KEY,
          UpdateExpression: 'SET n = :n',
          ExpressionAttributeValues: { ':n': { N: '1' } },
        }),
      ),
    );

    // Assess
    expect(error.name).toBe('TransactionConflictException');
    expect(classifyDependencyError(error)).toBe('conflict');
    expect(reached).toEqual([]);
  });

  it('lost: the call reaches the table, and the caller gets a TimeoutError', async () => {
    // Prepare
    const { client, reached } = faultyDynamoDb('dynamodb.PutItem:lost');

    // Act
    const error = await failureOf(client.send(new PutItemCommand({ TableName: 'unit-table', Item: KEY })));

    // Assess
    expect(reached).toEqual(['PutItem']);
    expect(error.name).toBe('TimeoutError');
    expect(classifyDependencyError(error)).toBe('unavailable');
  });

  it('refuse: a plain Error with code ECONNREFUSED, and nothing reaches the table', async () => {
    // Prepare
    const { client, reached } = faultyDynamoDb('dynamodb:refuse');

    // Act
    const error = await failureOf(client.send(new GetItemCommand({ TableName: 'unit-table', Key: KEY })));

    // Assess
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('ECONNREFUSED');
    expect(classifyDependencyError(error)).toBe('unavailable');
    expect(reached).toEqual([]);
  });

  it('unavailable: a 5xx of the service', async () => {
    // Prepare
    const { client } = faultyDynamoDb('dynamodb:unavailable');

    // Act
    const error = await failureOf(client.send(new GetItemCommand({ TableName: 'unit-table', Key: KEY })));

    // Assess
    expect(error.name).toBe('InternalServerError');
    expect((error.$metadata as { httpStatusCode: number }).httpStatusCode).toBe(500);
    expect(classifyDependencyError(error)).toBe('unavailable');
  });

  it('hang: nothing reaches the table, and the caller gets a TimeoutError after the request timeout', async () => {
    // Prepare
    const { client, reached } = faultyDynamoDb('dynamodb:hang');
    const started = Date.now();

    // Act
    const error = await failureOf(client.send(new GetItemCommand({ TableName: 'unit-table', Key: KEY })));

    // Assess
    expect(error.name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 1);
    expect(reached).toEqual([]);
  });

  it('fires a rule with x1 once: the next call goes through, and the tally counts one', async () => {
    // Prepare
    const { client, reached, injector } = faultyDynamoDb('dynamodb.PutItem:throttle=100%x1');
    const put = () => client.send(new PutItemCommand({ TableName: 'unit-table', Item: KEY }));

    // Act
    const first = await failureOf(put());
    const second = await put();

    // Assess
    expect(classifyDependencyError(first)).toBe('throttled');
    expect(second.$metadata.httpStatusCode).toBe(200);
    expect(reached).toEqual(['PutItem']);
    expect(injector.tally).toEqual(new Map([['dynamodb.PutItem:throttle=100%x1', 1]]));
    expect(injector.rules[0]?.remaining).toBe(0);
  });

  it('lets the first calls a rule with +N matches pass, then fires it: the second PutItem of a keyed create is its order, the first its claim', async () => {
    // Prepare
    const { client, reached, injector } = faultyDynamoDb('dynamodb.PutItem:refuse=100%+1');
    const put = () => client.send(new PutItemCommand({ TableName: 'unit-table', Item: KEY }));
    const get = () => client.send(new GetItemCommand({ TableName: 'unit-table', Key: KEY }));

    // Act
    const read = await get();
    const first = await put();
    const second = await failureOf(put());

    // Assess
    expect(read.$metadata.httpStatusCode).toBe(200);
    expect(first.$metadata.httpStatusCode).toBe(200);
    expect(second.code).toBe('ECONNREFUSED');
    expect(reached).toEqual(['GetItem', 'PutItem']);
    expect(injector.tally).toEqual(new Map([['dynamodb.PutItem:refuse=100%+1', 1]]));
  });

  it('matches `write` to the operations that write (PutItem), never to a read (GetItem)', async () => {
    // Prepare
    const { client, reached } = faultyDynamoDb('dynamodb.write:refuse');

    // Act
    const put = await failureOf(client.send(new PutItemCommand({ TableName: 'unit-table', Item: KEY })));
    const get = await client.send(new GetItemCommand({ TableName: 'unit-table', Key: KEY }));

    // Assess
    expect(put.code).toBe('ECONNREFUSED');
    expect(get.$metadata.httpStatusCode).toBe(200);
    expect(reached).toEqual(['GetItem']);
  });

  it('matches one operation only to itself', async () => {
    // Prepare
    const { client, reached } = faultyDynamoDb('dynamodb.TransactWriteItems:conflict');

    // Act
    await client.send(new PutItemCommand({ TableName: 'unit-table', Item: KEY }));

    // Assess
    expect(reached).toEqual(['PutItem']);
  });

  it('never fires a rule of 0%', async () => {
    // Prepare
    const { client, reached } = faultyDynamoDb('dynamodb:refuse=0%');

    // Act
    for (let call = 0; call < 20; call++) await client.send(new GetItemCommand({ TableName: 'unit-table', Key: KEY }));

    // Assess
    expect(reached).toHaveLength(20);
  });

  it("uses the invocation's own rules instead of the process's when it brings some", async () => {
    // Prepare
    const own = parseFaultSpec('dynamodb.GetItem:refuse');
    let current: FaultRule[] | undefined = own;
    const { client, reached } = faultyDynamoDb('dynamodb.PutItem:refuse', { rulesOf: () => current });

    // Act
    const get = await failureOf(client.send(new GetItemCommand({ TableName: 'unit-table', Key: KEY })));
    await client.send(new PutItemCommand({ TableName: 'unit-table', Item: KEY }));
    current = undefined;
    const put = await failureOf(client.send(new PutItemCommand({ TableName: 'unit-table', Item: KEY })));

    // Assess
    expect(get.code).toBe('ECONNREFUSED');
    expect(put.code).toBe('ECONNREFUSED');
    expect(reached).toEqual(['PutItem']);
  });
});
