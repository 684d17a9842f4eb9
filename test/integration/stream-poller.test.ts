import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DeleteItemCommand,
  DeleteTableCommand,
  DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localClientConfig } from '#local/aws-env';
import { createStreamPoller, fileCheckpoints, type OnFailureRecord, type StreamPoller } from '#local/stream-poller';
import { stack } from './helpers';

/**
 * The stream poller (local/stream-poller.ts) on DynamoDB Local's real stream: each test writes to a
 * small table of its own (stream NEW_AND_OLD_IMAGES) and reads its changes back the way the local
 * stack's stream consumer will. The rules themselves (bisection, retries, partial failures) are
 * covered against the mocked API in test/unit/local-stream-poller.test.ts.
 */
const ddb = new DynamoDBClient({ endpoint: stack.endpoints.dynamodb, ...localClientConfig });
const streams = new DynamoDBStreamsClient({ endpoint: stack.endpoints.dynamodb, ...localClientConfig });
const tables: string[] = [];
let scratch: string;

/** A fresh table with a NEW_AND_OLD_IMAGES stream; its stream ARN. */
const streamTable = async () => {
  const name = `stream-poller-${randomUUID().slice(0, 8)}`;
  const { TableDescription } = await ddb.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  tables.push(name);
  const streamArn = TableDescription?.LatestStreamArn;
  if (!streamArn) throw new Error(`no stream on ${name}`);
  return { name, streamArn };
};

const putOrder = (table: string, n: number, status = 'pending') =>
  ddb.send(
    new PutItemCommand({
      TableName: table,
      Item: { pk: { S: 'M#stream' }, sk: { S: `ORDER#${n}` }, status: { S: status }, amount: { N: String(1000 * n) } },
    }),
  );

/** A handler that keeps what it got; `fail` makes it throw on a batch. */
const recorder = (fail: (records: DynamoDBRecord[]) => boolean = () => false) => {
  const records: DynamoDBRecord[] = [];
  const handler = async (event: DynamoDBStreamEvent) => {
    if (fail(event.Records)) throw new Error('cannot process this batch');
    records.push(...event.Records);
  };
  return { records, handler };
};

const pollUntil = async (poller: StreamPoller, done: () => boolean, rounds = 50) => {
  for (let round = 0; round < rounds && !done(); round++) await poller.pollOnce();
};

const sortKeyOf = (record: DynamoDBRecord) => record.dynamodb?.Keys?.sk?.S;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'stream-poller-'));
});

afterAll(async () => {
  await Promise.all(tables.map((TableName) => ddb.send(new DeleteTableCommand({ TableName }))));
  await rm(scratch, { recursive: true, force: true });
});

describe('stream poller on DynamoDB Local', () => {
  it("hands the table's changes to the handler in order, with their event names and images in DynamoDB JSON", async () => {
    // Prepare
    const { name, streamArn } = await streamTable();
    const startedAt = Math.floor(Date.now() / 1000);
    await putOrder(name, 1);
    await ddb.send(
      new UpdateItemCommand({
        TableName: name,
        Key: { pk: { S: 'M#stream' }, sk: { S: 'ORDER#1' } },
        UpdateExpression: 'SET #status = :accepted',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':accepted': { S: 'accepted' } },
      }),
    );
    await ddb.send(
      new PutItemCommand({
        TableName: name,
        Item: { pk: { S: 'M#stream' }, sk: { S: 'ORDER#2' }, token: { B: Uint8Array.from([0xde, 0xad, 0xbe, 0xef]) } },
      }),
    );
    await ddb.send(new DeleteItemCommand({ TableName: name, Key: { pk: { S: 'M#stream' }, sk: { S: 'ORDER#1' } } }));
    const { records, handler } = recorder();
    const poller = createStreamPoller({
      client: streams,
      streamArn,
      handler,
      functionName: 'stream-consumer',
      batchSize: 3,
      region: 'eu-central-1',
      onBatchDiscarded: async () => undefined,
    });

    // Act
    await pollUntil(poller, () => records.length >= 4);

    // Assess
    expect(records.map((record) => [record.eventName, sortKeyOf(record)])).toEqual([
      ['INSERT', 'ORDER#1'],
      ['MODIFY', 'ORDER#1'],
      ['INSERT', 'ORDER#2'],
      ['REMOVE', 'ORDER#1'],
    ]);
    const [insert, modify, binary, remove] = records;
    expect(insert).toMatchObject({
      eventVersion: '1.1',
      eventSource: 'aws:dynamodb',
      awsRegion: 'eu-central-1',
      eventSourceARN: streamArn,
      dynamodb: {
        Keys: { pk: { S: 'M#stream' }, sk: { S: 'ORDER#1' } },
        NewImage: { pk: { S: 'M#stream' }, sk: { S: 'ORDER#1' }, status: { S: 'pending' }, amount: { N: '1000' } },
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    });
    expect(insert?.dynamodb?.OldImage).toBeUndefined();
    expect(modify?.dynamodb?.OldImage?.status).toEqual({ S: 'pending' });
    expect(modify?.dynamodb?.NewImage?.status).toEqual({ S: 'accepted' });
    expect(binary?.dynamodb?.NewImage?.token).toEqual({ B: '3q2+7w==' });
    expect(remove?.dynamodb?.NewImage).toBeUndefined();
    expect(remove?.dynamodb?.OldImage?.status).toEqual({ S: 'accepted' });
    const sequenceNumbers = records.map((record) => BigInt(record.dynamodb?.SequenceNumber ?? '0'));
    expect([...sequenceNumbers].sort((a, b) => (a < b ? -1 : 1))).toEqual(sequenceNumbers);
    // Whole seconds; DynamoDB Local rounds them down to the minute.
    for (const record of records) {
      const created = record.dynamodb?.ApproximateCreationDateTime ?? 0;
      expect(Number.isInteger(created)).toBe(true);
      expect(created).toBeGreaterThanOrEqual(startedAt - 60);
      expect(created).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    }
  });

  it('starts a new poller after the records its checkpoint file says the last one finished', async () => {
    // Prepare
    const { name, streamArn } = await streamTable();
    const checkpointFile = join(scratch, `${name}.json`);
    const options = { client: streams, streamArn, functionName: 'stream-consumer', onBatchDiscarded: async () => undefined };
    const before = recorder();
    await putOrder(name, 1);
    await putOrder(name, 2);
    await pollUntil(
      createStreamPoller({ ...options, handler: before.handler, checkpoints: fileCheckpoints(checkpointFile) }),
      () => before.records.length >= 2,
    );
    await putOrder(name, 3);
    const after = recorder();
    const restarted = createStreamPoller({ ...options, handler: after.handler, checkpoints: fileCheckpoints(checkpointFile) });

    // Act
    await pollUntil(restarted, () => after.records.length >= 1);
    await restarted.pollOnce();

    // Assess
    expect(before.records.map(sortKeyOf)).toEqual(['ORDER#1', 'ORDER#2']);
    expect(after.records.map(sortKeyOf)).toEqual(['ORDER#3']);
    const stored = JSON.parse(await readFile(checkpointFile, 'utf8'));
    expect(Object.values(stored)).toEqual([after.records[0]?.dynamodb?.SequenceNumber]);
  });

  it('while running, gives the change its handler cannot process to onBatchDiscarded and carries on with the next ones', async () => {
    // Prepare
    const { name, streamArn } = await streamTable();
    const { records, handler } = recorder((batch) => batch.some((record) => sortKeyOf(record) === 'ORDER#2'));
    const discarded: OnFailureRecord[] = [];
    const poller = createStreamPoller({
      client: streams,
      streamArn,
      handler,
      functionName: 'stream-consumer',
      maxRetryAttempts: 1,
      pollIntervalMs: 20,
      onBatchDiscarded: async (record) => {
        discarded.push(record);
      },
      onError: () => undefined,
    });
    for (const n of [1, 2, 3]) await putOrder(name, n);

    // Act
    poller.start();
    await vi.waitFor(() => expect(records.map(sortKeyOf)).toEqual(['ORDER#1', 'ORDER#3']), { timeout: 10_000, interval: 50 });
    await poller.stop();

    // Assess
    expect(discarded).toHaveLength(1);
    const info = discarded[0]?.DDBStreamBatchInfo;
    expect(info).toMatchObject({ streamArn, batchSize: 1 });
    expect(BigInt(info?.startSequenceNumber ?? '0')).toBeGreaterThan(BigInt(records[0]?.dynamodb?.SequenceNumber ?? '0'));
    expect(BigInt(info?.startSequenceNumber ?? '0')).toBeLessThan(BigInt(records[1]?.dynamodb?.SequenceNumber ?? '0'));
    expect(discarded[0]?.requestContext).toMatchObject({ condition: 'RetryAttemptsExhausted', approximateInvokeCount: 2 });
  });
});
