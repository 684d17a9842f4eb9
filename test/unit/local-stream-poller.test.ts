import 'aws-sdk-client-mock-vitest/extend';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type Checkpoints,
  createStreamPoller,
  memoryCheckpoints,
  type OnFailureRecord,
  type StreamPollerOptions,
  toLambdaAttributeValue,
} from '#local/stream-poller';

/**
 * The local stand-in for the DynamoDB stream event source mapping (local/stream-poller.ts), against
 * a mocked DynamoDB Streams API: order, checkpoints, retries, partial failures, bisection, the
 * on-failure record, shards and iterators. The same poller reads DynamoDB Local's real stream in
 * test/integration/stream-poller.test.ts.
 */
const streamsMock = mockClient(DynamoDBStreamsClient);
const STREAM_ARN = 'arn:aws:dynamodb:us-east-1:000000000000:table/unit-table/stream/2026-03-01T12:00:00.000';
const SHARD = 'shardId-00000001772366400000-0a1b2c3d';
const CHILD_SHARD = 'shardId-00000001772380800000-4e5f6a7b';
const MERCHANT_PK = 'M#6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';

const seq = (n: number) => String(n).padStart(21, '0');

/** The n-th change of the stream: order n inserted at 12:00:n, as GetRecords returns it (SDK types). */
const change = (n: number, overrides: Partial<_Record> = {}): _Record => ({
  eventID: `event-${n}`,
  eventName: 'INSERT',
  eventVersion: '1.1',
  eventSource: 'aws:dynamodb',
  awsRegion: 'ddblocal',
  dynamodb: {
    ApproximateCreationDateTime: new Date(`2026-03-01T12:00:${String(n).padStart(2, '0')}Z`),
    Keys: { pk: { S: MERCHANT_PK }, sk: { S: `ORDER#${n}` } },
    NewImage: { pk: { S: MERCHANT_PK }, sk: { S: `ORDER#${n}` }, status: { S: 'pending' }, amount: { N: String(1000 * n) } },
    SequenceNumber: seq(n),
    SizeBytes: 80,
    StreamViewType: 'NEW_AND_OLD_IMAGES',
  },
  ...overrides,
});

const shard = (ShardId: string, ParentShardId?: string, closed = false) => ({
  ShardId,
  ...(ParentShardId ? { ParentShardId } : {}),
  SequenceNumberRange: { StartingSequenceNumber: seq(1), ...(closed ? { EndingSequenceNumber: seq(99) } : {}) },
});

/** DescribeStream lists these shards. */
const listShards = (...shards: ReturnType<typeof shard>[]) =>
  streamsMock.on(DescribeStreamCommand).resolves({ StreamDescription: { StreamArn: STREAM_ARN, Shards: shards } });

/**
 * A shard whose GetRecords calls return `pages` in turn (each page's iterator leads to the next),
 * then nothing: an open shard keeps an iterator, a closed one ends with the last page.
 */
const shardPages = (shardId: string, pages: _Record[][], { closed = false } = {}) => {
  const iterator = (page: number) => `${shardId}/page-${page}`;
  streamsMock.on(GetShardIteratorCommand, { ShardId: shardId }).resolves({ ShardIterator: iterator(0) });
  for (let page = 0; page <= pages.length; page++) {
    const last = page >= pages.length - 1;
    const output: Partial<GetRecordsCommandOutput> = {
      Records: pages[page] ?? [],
      ...(closed && last ? {} : { NextShardIterator: iterator(Math.min(page + 1, pages.length)) }),
    };
    streamsMock.on(GetRecordsCommand, { ShardIterator: iterator(page) }).resolves(output);
  }
};

const sequenceNumbers = (event: DynamoDBStreamEvent) => event.Records.map((record) => record.dynamodb?.SequenceNumber);

/** A handler that fails the way `answer` says for each event, and remembers the batches it got. */
const recordingHandler = (answer: (event: DynamoDBStreamEvent) => DynamoDBBatchResponse | undefined = () => undefined) => {
  const batches: (string | undefined)[][] = [];
  const handler = vi.fn(async (event: DynamoDBStreamEvent, _context: Context) => {
    batches.push(sequenceNumbers(event));
    return answer(event);
  });
  return { handler, batches };
};

const throwsOn =
  (bad: number) =>
  (event: DynamoDBStreamEvent): undefined => {
    if (sequenceNumbers(event).includes(seq(bad))) throw new Error(`cannot process order ${bad}`);
    return undefined;
  };

const reports =
  (...bad: number[]) =>
  (event: DynamoDBStreamEvent): DynamoDBBatchResponse => ({
    batchItemFailures: bad.filter((n) => sequenceNumbers(event).includes(seq(n))).map((n) => ({ itemIdentifier: seq(n) })),
  });

type Setup = Partial<StreamPollerOptions> & Pick<StreamPollerOptions, 'handler'>;

const pollerWith = (options: Setup) => {
  const discarded: OnFailureRecord[] = [];
  const checkpoints = options.checkpoints ?? memoryCheckpoints();
  const poller = createStreamPoller({
    client: new DynamoDBStreamsClient({ region: 'us-east-1' }),
    streamArn: STREAM_ARN,
    functionName: 'stream-consumer',
    onBatchDiscarded: async (record) => {
      discarded.push(record);
    },
    onError: () => undefined,
    ...options,
    checkpoints,
  });
  const pollTimes = async (rounds: number) => {
    for (let round = 0; round < rounds; round++) await poller.pollOnce();
  };
  return { poller, discarded, checkpoints, pollTimes };
};

beforeEach(() => {
  streamsMock.reset();
  listShards(shard(SHARD));
});

describe('createStreamPoller', () => {
  it('hands the records to the handler in stream order, one batch per poll, and moves the checkpoint past each batch', async () => {
    // Prepare
    shardPages(SHARD, [[change(1), change(2)], [change(3)]]);
    const { handler, batches } = recordingHandler();
    const { poller, checkpoints } = pollerWith({ handler, batchSize: 2 });

    // Act
    const first = await poller.pollOnce();
    const afterFirst = await checkpoints.get(SHARD);
    const second = await poller.pollOnce();

    // Assess
    expect(batches).toEqual([[seq(1), seq(2)], [seq(3)]]);
    expect(first).toEqual({ invocations: 1, records: 2, checkpointed: 2, discarded: 0 });
    expect(second).toEqual({ invocations: 1, records: 1, checkpointed: 1, discarded: 0 });
    expect(afterFirst).toBe(seq(2));
    expect(await checkpoints.get(SHARD)).toBe(seq(3));
    expect(streamsMock).toHaveReceivedCommandWith(GetShardIteratorCommand, {
      StreamArn: STREAM_ARN,
      ShardId: SHARD,
      ShardIteratorType: 'TRIM_HORIZON',
    });
    expect(streamsMock).toHaveReceivedNthCommandWith(GetRecordsCommand, 1, { ShardIterator: `${SHARD}/page-0`, Limit: 2 });
    expect(streamsMock).toHaveReceivedNthCommandWith(GetRecordsCommand, 2, { ShardIterator: `${SHARD}/page-1`, Limit: 2 });
  });

  it('hands over only the records its filters match, as an event source mapping with FilterCriteria, batched from large reads, and checkpoints past the rest', async () => {
    // Prepare: changes 1, 3 and 5 are paid orders; 2, 4 and 6 are not.
    const paid = (n: number) =>
      change(n, {
        dynamodb: { ...change(n).dynamodb, NewImage: { ...change(n).dynamodb?.NewImage, status: { S: 'paid' } } },
      });
    shardPages(SHARD, [[paid(1), change(2), paid(3), change(4), paid(5)], [change(6)]]);
    const { handler, batches } = recordingHandler();
    const { poller, checkpoints } = pollerWith({
      handler,
      batchSize: 2,
      filterPatterns: [{ eventName: ['INSERT'], dynamodb: { NewImage: { status: { S: ['paid'] } } } }],
    });

    // Act
    const first = await poller.pollOnce();
    const afterFirst = await checkpoints.get(SHARD);
    const second = await poller.pollOnce();
    const third = await poller.pollOnce();

    // Assess
    expect(batches).toEqual([[seq(1), seq(3)], [seq(5)]]);
    expect(first).toEqual({ invocations: 1, records: 2, checkpointed: 3, discarded: 0 });
    expect(afterFirst).toBe(seq(3));
    expect(second).toEqual({ invocations: 1, records: 1, checkpointed: 2, discarded: 0 });
    expect(third).toEqual({ invocations: 0, records: 0, checkpointed: 1, discarded: 0 });
    expect(await checkpoints.get(SHARD)).toBe(seq(6));
    expect(streamsMock).toHaveReceivedNthCommandWith(GetRecordsCommand, 1, { ShardIterator: `${SHARD}/page-0`, Limit: 1000 });
  });

  it('refuses a filter pattern with an operator it does not apply, rather than misread it', () => {
    expect(() =>
      pollerWith({
        handler: recordingHandler().handler,
        filterPatterns: [{ dynamodb: { NewImage: { status: { S: [{ 'anything-but': 'paid' }] as never } } } }],
      }),
    ).toThrow(/only lists of plain values/);
  });

  it('gives the handler records in Lambda’s shape: DynamoDB JSON images, base64 binaries, creation time in seconds', async () => {
    // Prepare
    const modify = change(2, {
      eventName: 'MODIFY',
      dynamodb: {
        ApproximateCreationDateTime: new Date('2026-03-01T12:00:02.750Z'),
        Keys: { pk: { S: MERCHANT_PK }, sk: { S: 'ORDER#1' } },
        OldImage: { pk: { S: MERCHANT_PK }, sk: { S: 'ORDER#1' }, status: { S: 'pending' }, tags: { SS: ['web'] } },
        NewImage: {
          pk: { S: MERCHANT_PK },
          sk: { S: 'ORDER#1' },
          status: { S: 'accepted' },
          tags: { SS: ['web'] },
          token: { B: Uint8Array.from([0xde, 0xad, 0xbe, 0xef]) },
          lines: { L: [{ M: { sku: { S: 'tent' }, qty: { N: '2' }, thumbs: { BS: [Uint8Array.from([1, 2, 3])] } } }] },
          note: { NULL: true },
          gift: { BOOL: false },
        },
        SequenceNumber: seq(2),
        SizeBytes: 190,
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    });
    shardPages(SHARD, [[modify]]);
    const { handler } = recordingHandler();
    const { poller } = pollerWith({ handler, region: 'eu-west-1' });

    // Act
    await poller.pollOnce();

    // Assess
    const [event, context] = handler.mock.calls[0] ?? [];
    expect(event?.Records).toEqual([
      {
        eventID: 'event-2',
        eventName: 'MODIFY',
        eventVersion: '1.1',
        eventSource: 'aws:dynamodb',
        awsRegion: 'eu-west-1',
        dynamodb: {
          ApproximateCreationDateTime: Date.parse('2026-03-01T12:00:02Z') / 1000,
          Keys: { pk: { S: MERCHANT_PK }, sk: { S: 'ORDER#1' } },
          NewImage: {
            pk: { S: MERCHANT_PK },
            sk: { S: 'ORDER#1' },
            status: { S: 'accepted' },
            tags: { SS: ['web'] },
            token: { B: '3q2+7w==' },
            lines: { L: [{ M: { sku: { S: 'tent' }, qty: { N: '2' }, thumbs: { BS: ['AQID'] } } }] },
            note: { NULL: true },
            gift: { BOOL: false },
          },
          OldImage: { pk: { S: MERCHANT_PK }, sk: { S: 'ORDER#1' }, status: { S: 'pending' }, tags: { SS: ['web'] } },
          SequenceNumber: seq(2),
          SizeBytes: 190,
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
        eventSourceARN: STREAM_ARN,
      },
    ]);
    // What the handler gets is what Lambda would give it: plain JSON, nothing the SDK built.
    expect(JSON.parse(JSON.stringify(event))).toEqual(event);
    expect(context).toMatchObject({ functionName: 'stream-consumer', awsRequestId: expect.any(String) });
  });

  it('sends the whole batch again when the handler throws, and moves on once it succeeds', async () => {
    // Prepare
    shardPages(SHARD, [[change(1), change(2)], [change(3)]]);
    let calls = 0;
    const { handler, batches } = recordingHandler(() => {
      calls += 1;
      if (calls === 1) throw new Error('table busy');
      return undefined;
    });
    const onError = vi.fn();
    const { poller, checkpoints } = pollerWith({ handler, bisectOnError: false, onError });

    // Act
    const failed = await poller.pollOnce();
    const afterFailure = await checkpoints.get(SHARD);
    await poller.pollOnce();
    await poller.pollOnce();

    // Assess
    expect(batches).toEqual([[seq(1), seq(2)], [seq(1), seq(2)], [seq(3)]]);
    expect(failed).toEqual({ invocations: 1, records: 2, checkpointed: 0, discarded: 0 });
    expect(afterFailure).toBeUndefined();
    expect(await checkpoints.get(SHARD)).toBe(seq(3));
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining('table busy') }));
  });

  it('retries from the lowest sequence number the handler reports, after checkpointing the records before it', async () => {
    // Prepare
    shardPages(SHARD, [[change(1), change(2), change(3), change(4)]]);
    let calls = 0;
    const { handler, batches } = recordingHandler(() => {
      calls += 1;
      return calls === 1 ? { batchItemFailures: [{ itemIdentifier: seq(4) }, { itemIdentifier: seq(2) }] } : { batchItemFailures: [] };
    });
    const { poller, checkpoints } = pollerWith({ handler, bisectOnError: false });

    // Act
    const partial = await poller.pollOnce();
    const afterPartial = await checkpoints.get(SHARD);
    await poller.pollOnce();

    // Assess
    expect(batches).toEqual([
      [seq(1), seq(2), seq(3), seq(4)],
      [seq(2), seq(3), seq(4)],
    ]);
    expect(partial).toEqual({ invocations: 1, records: 4, checkpointed: 1, discarded: 0 });
    expect(afterPartial).toBe(seq(1));
    expect(await checkpoints.get(SHARD)).toBe(seq(4));
  });

  it.each([
    ['a sequence number that is not in the batch', seq(42)],
    ['an empty identifier', ''],
  ])('fails the whole batch for a reported failure with %s', async (_case, itemIdentifier) => {
    // Prepare
    shardPages(SHARD, [[change(1), change(2)]]);
    let calls = 0;
    const { handler, batches } = recordingHandler(() => {
      calls += 1;
      return calls === 1 ? { batchItemFailures: [{ itemIdentifier: seq(2) }, { itemIdentifier }] } : undefined;
    });
    const { poller, checkpoints } = pollerWith({ handler, bisectOnError: false });

    // Act
    await poller.pollOnce();
    const afterFailure = await checkpoints.get(SHARD);
    await poller.pollOnce();

    // Assess
    expect(batches).toEqual([
      [seq(1), seq(2)],
      [seq(1), seq(2)],
    ]);
    expect(afterFailure).toBeUndefined();
    expect(await checkpoints.get(SHARD)).toBe(seq(2));
  });

  it('bisects a failing batch down to the bad record, retries it alone, then gives it to onBatchDiscarded and moves on', async () => {
    // Prepare
    shardPages(SHARD, [[change(1), change(2), change(3), change(4)]]);
    const { handler, batches } = recordingHandler(throwsOn(3));
    const { pollTimes, discarded, checkpoints } = pollerWith({ handler, maxRetryAttempts: 2 });

    // Act
    await pollTimes(8);

    // Assess
    // Splits are not retries: only the lone bad record is sent again, twice, before it is given up.
    expect(batches).toEqual([[seq(1), seq(2), seq(3), seq(4)], [seq(1), seq(2)], [seq(3), seq(4)], [seq(3)], [seq(3)], [seq(3)], [seq(4)]]);
    const lastInvocation = handler.mock.calls[5]?.[1];
    expect(discarded).toEqual([
      {
        requestContext: {
          requestId: lastInvocation?.awsRequestId,
          functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:stream-consumer',
          condition: 'RetryAttemptsExhausted',
          approximateInvokeCount: 3,
        },
        responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
        version: '1.0',
        timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        DDBStreamBatchInfo: {
          shardId: SHARD,
          startSequenceNumber: seq(3),
          endSequenceNumber: seq(3),
          approximateArrivalOfFirstRecord: '2026-03-01T12:00:03Z',
          approximateArrivalOfLastRecord: '2026-03-01T12:00:03Z',
          batchSize: 1,
          streamArn: STREAM_ARN,
        },
      },
    ]);
    expect(await checkpoints.get(SHARD)).toBe(seq(4));
  });

  it('without bisection, gives up the records from the reported failure on after the retries, as one batch', async () => {
    // Prepare
    shardPages(SHARD, [[change(1), change(2), change(3)], [change(4)]]);
    const { handler, batches } = recordingHandler(reports(2));
    const { pollTimes, discarded, checkpoints } = pollerWith({ handler, bisectOnError: false, maxRetryAttempts: 2 });

    // Act
    await pollTimes(4);

    // Assess
    // The retries of a partial failure are the same batch sent again from the checkpoint: they count.
    expect(batches).toEqual([[seq(1), seq(2), seq(3)], [seq(2), seq(3)], [seq(2), seq(3)], [seq(4)]]);
    expect(discarded).toHaveLength(1);
    expect(discarded[0]).toMatchObject({
      requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 },
      DDBStreamBatchInfo: {
        startSequenceNumber: seq(2),
        endSequenceNumber: seq(3),
        approximateArrivalOfFirstRecord: '2026-03-01T12:00:02Z',
        approximateArrivalOfLastRecord: '2026-03-01T12:00:03Z',
        batchSize: 2,
      },
    });
    // The function answered: no function error, only the records it reported.
    expect(discarded[0]?.responseContext).toEqual({ statusCode: 200, executedVersion: '$LATEST' });
    expect(await checkpoints.get(SHARD)).toBe(seq(4));
  });

  it('with bisection, splits a partial failure at the reported record, so only that record is given up', async () => {
    // Prepare
    shardPages(SHARD, [[change(1), change(2), change(3)]]);
    const { handler, batches } = recordingHandler(reports(2));
    const { pollTimes, discarded, checkpoints } = pollerWith({ handler, maxRetryAttempts: 1 });

    // Act
    await pollTimes(6);

    // Assess
    expect(batches).toEqual([[seq(1), seq(2), seq(3)], [seq(2), seq(3)], [seq(2)], [seq(2)], [seq(3)]]);
    expect(discarded.map((record) => record.DDBStreamBatchInfo)).toEqual([
      expect.objectContaining({ startSequenceNumber: seq(2), endSequenceNumber: seq(2), batchSize: 1 }),
    ]);
    expect(discarded[0]?.requestContext.approximateInvokeCount).toBe(2);
    expect(await checkpoints.get(SHARD)).toBe(seq(3));
  });

  it('keeps a given-up batch until onBatchDiscarded takes it, without invoking the handler again', async () => {
    // Prepare
    shardPages(SHARD, [[change(1)], [change(2)]]);
    const { handler, batches } = recordingHandler(throwsOn(1));
    const destination = vi.fn().mockRejectedValueOnce(new Error('queue unreachable')).mockResolvedValue(undefined);
    const { poller, checkpoints } = pollerWith({ handler, maxRetryAttempts: 0, onBatchDiscarded: destination });

    // Act
    const delivery = await poller.pollOnce().catch((error: Error) => error);
    const afterFailedDelivery = await checkpoints.get(SHARD);
    const redelivery = await poller.pollOnce();
    await poller.pollOnce();

    // Assess
    expect(delivery).toMatchObject({ message: 'queue unreachable' });
    expect(afterFailedDelivery).toBeUndefined();
    expect(redelivery).toEqual({ invocations: 0, records: 0, checkpointed: 1, discarded: 1 });
    expect(destination).toHaveBeenCalledTimes(2);
    expect(destination.mock.calls[1]?.[0]).toEqual(destination.mock.calls[0]?.[0]);
    expect(batches).toEqual([[seq(1)], [seq(2)]]);
    expect(await checkpoints.get(SHARD)).toBe(seq(2));
  });

  it('resumes after the stored checkpoint', async () => {
    // Prepare
    streamsMock
      .on(GetShardIteratorCommand, { ShardId: SHARD, ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: seq(5) })
      .resolves({ ShardIterator: 'after-5' });
    streamsMock.on(GetRecordsCommand, { ShardIterator: 'after-5' }).resolves({ Records: [change(6)], NextShardIterator: 'after-6' });
    const stored: Checkpoints = memoryCheckpoints();
    await stored.set(SHARD, seq(5));
    const { handler, batches } = recordingHandler();
    const { poller } = pollerWith({ handler, checkpoints: stored });

    // Act
    await poller.pollOnce();

    // Assess
    expect(batches).toEqual([[seq(6)]]);
    expect(streamsMock).not.toHaveReceivedCommandWith(GetShardIteratorCommand, { ShardIteratorType: 'TRIM_HORIZON' });
    expect(await stored.get(SHARD)).toBe(seq(6));
  });

  it('opens an expired iterator again after the last record read', async () => {
    // Prepare
    shardPages(SHARD, [[change(1), change(2)]]);
    streamsMock
      .on(GetRecordsCommand, { ShardIterator: `${SHARD}/page-1` })
      .rejectsOnce(new ExpiredIteratorException({ message: 'Iterator expired', $metadata: {} }));
    streamsMock
      .on(GetShardIteratorCommand, { ShardId: SHARD, ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: seq(2) })
      .resolves({ ShardIterator: 'after-2' });
    streamsMock.on(GetRecordsCommand, { ShardIterator: 'after-2' }).resolves({ Records: [change(3)], NextShardIterator: 'after-3' });
    const { handler, batches } = recordingHandler();
    const { pollTimes } = pollerWith({ handler });

    // Act
    await pollTimes(2);

    // Assess
    expect(batches).toEqual([[seq(1), seq(2)], [seq(3)]]);
  });

  it('reads a parent shard to its end before its child, and finds the child by listing the shards again', async () => {
    // Prepare
    listShards(shard(SHARD, undefined, true), shard(CHILD_SHARD, SHARD));
    shardPages(SHARD, [[change(1)], [change(2)]], { closed: true });
    shardPages(CHILD_SHARD, [[change(3)]]);
    const { handler, batches } = recordingHandler();
    const { pollTimes, checkpoints } = pollerWith({ handler });

    // Act
    await pollTimes(4);

    // Assess
    expect(batches).toEqual([[seq(1)], [seq(2)], [seq(3)]]);
    expect(streamsMock).not.toHaveReceivedCommandWith(GetRecordsCommand, { ShardIterator: `${SHARD}/page-2` });
    expect(streamsMock).toHaveReceivedCommandTimes(DescribeStreamCommand, 2);
    expect(await checkpoints.get(SHARD)).toBe(seq(2));
    expect(await checkpoints.get(CHILD_SHARD)).toBe(seq(3));
  });
});

describe('toLambdaAttributeValue', () => {
  it('gives an empty map back its type (the SDK hands it over as {}), which a stored segment without rates has', () => {
    // Act
    const value = toLambdaAttributeValue({} as never);

    // Assess
    expect(value).toEqual({ M: {} });
  });

  it('writes binary values as base64, as in the JSON Lambda sends', () => {
    expect(toLambdaAttributeValue({ B: new Uint8Array([1, 2, 3]) })).toEqual({ B: 'AQID' });
  });
});
