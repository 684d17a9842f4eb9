import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  type _Record,
  type AttributeValue,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  AttributeValue as LambdaAttributeValue,
  StreamRecord,
} from 'aws-lambda';
import type { FilterPattern } from '#functions/workers';
import { asError, errorName } from '#shared/errors';
import { lambdaContext } from './apigw';
import { checkFilterPattern, passesFilters } from './event-filter';
import { type InvocationOutcome, invokeWith, pollingLoop } from './loop';

/** Local stand-in for Lambda's DynamoDB Streams event source mapping: docs/architecture.md#the-local-stream-poller. */

/** The function's handler: it may return a partial batch response, or nothing (a complete success). */
export type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse | undefined> | Promise<void>;

/** Where each shard's processing stands: the last sequence number done with (processed or given up). */
export type Checkpoints = {
  get: (shardId: string) => Promise<string | undefined>;
  set: (shardId: string, sequenceNumber: string) => Promise<void>;
};

/** What Lambda sends the on-failure destination of a DynamoDB stream mapping when it gives a batch up. */
export type OnFailureRecord = ReturnType<typeof onFailureRecord>;

export type StreamPollerOptions = {
  client: DynamoDBStreamsClient;
  /** The stream's ARN (DescribeTable's LatestStreamArn). */
  streamArn: string;
  handler: StreamHandler;
  /** The function's name, for its Lambda context. */
  functionName: string;
  /** The function's timeout, for context.getRemainingTimeInMillis (default: lambdaContext's). */
  timeoutSeconds?: number;
  /** BatchSize (default 100); one GetRecords returns 1,000 records at most. */
  batchSize?: number;
  /** MaximumRetryAttempts (default 10); -1 retries until the records expire, as Lambda's default does. */
  maxRetryAttempts?: number;
  /** BisectBatchOnFunctionError (default true). */
  bisectOnError?: boolean;
  /** How often each shard is polled when it had nothing (default 250 ms: Lambda polls 4 times a second). */
  pollIntervalMs?: number;
  /** The records' awsRegion (default AWS_REGION, else us-east-1). */
  region?: string;
  /** FilterCriteria: only records that match one of these patterns reach the handler (local/event-filter.ts); the rest are passed over. */
  filterPatterns?: readonly FilterPattern[];
  /** The on-failure destination: gets a given-up batch's record; the checkpoint moves past it once this resolves. */
  onBatchDiscarded: (record: OnFailureRecord) => Promise<void>;
  /** Where each shard resumes after a restart (default: in memory, so a new poller starts at TRIM_HORIZON). */
  checkpoints?: Checkpoints;
  /** Handler failures (the batch is retried or split) and read errors (the loop backs off and carries on). */
  onError?: (error: Error) => void;
};

/** pollOnce: one round's handler invocations (one per shard at most), the records they got, those the checkpoints moved past and those given up; stop ends start's loop after the round in progress. */
export type StreamPoller = ReturnType<typeof createStreamPoller>;

/** In-memory checkpoints, the default: a new poller starts every shard at TRIM_HORIZON. */
export const memoryCheckpoints = (): Checkpoints => {
  const sequenceNumbers = new Map<string, string>();
  return {
    get: async (shardId) => sequenceNumbers.get(shardId),
    set: async (shardId, sequenceNumber) => {
      sequenceNumbers.set(shardId, sequenceNumber);
    },
  };
};

/** Checkpoints in a JSON file, so a restart of `npm start` resumes where it stopped; the poller never sets two at once. */
export const fileCheckpoints = (path: string): Checkpoints => {
  let loaded: Promise<Record<string, string>> | undefined;
  const parse = (text: string): Record<string, string> => {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value !== 'object' || !value || Array.isArray(value) || Object.values(value).some((seq) => typeof seq !== 'string'))
        throw new Error('expected { "<shardId>": "<sequenceNumber>" }');
      return { ...(value as Record<string, string>) };
    } catch (error) {
      throw new Error(`stream checkpoints in ${path} are unreadable (${asError(error).message}): fix or delete the file`);
    }
  };
  const load = () => {
    loaded ??= readFile(path, 'utf8').then(parse, (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return {};
      throw error;
    });
    // A failed load is tried again on the next call (the file may have been fixed).
    loaded.catch(() => (loaded = undefined));
    return loaded;
  };
  return {
    get: async (shardId) => (await load())[shardId],
    set: async (shardId, sequenceNumber) => {
      const sequenceNumbers = await load();
      sequenceNumbers[shardId] = sequenceNumber;
      await mkdir(dirname(path), { recursive: true });
      await writeFile(`${path}.tmp`, `${JSON.stringify(sequenceNumbers, null, 2)}\n`);
      await rename(`${path}.tmp`, path);
    },
  };
};

const base64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** An attribute value as Lambda's JSON has it: the SDK's Uint8Array binaries become base64 strings. */
export const toLambdaAttributeValue = (value: AttributeValue): LambdaAttributeValue => {
  if (value.B !== undefined) return { B: base64(value.B) };
  if (value.BS !== undefined) return { BS: value.BS.map(base64) };
  if (value.M !== undefined) return { M: toLambdaImage(value.M) };
  if (value.L !== undefined) return { L: value.L.map(toLambdaAttributeValue) };
  // The SDK's DynamoDB Streams deserializer turns an empty map ({ M: {} }) into {}: give it back its type.
  if (Object.keys(value).length === 0) return { M: {} };
  // The other types hold strings, booleans or lists of strings: JSON already.
  return value as LambdaAttributeValue;
};

const toLambdaImage = (image: Record<string, AttributeValue>): Record<string, LambdaAttributeValue> =>
  Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toLambdaAttributeValue(value)]));

const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** The record shape Lambda's DynamoDB integration sends (field order as in Lambda's events). */
export const toDynamoDBRecord = (record: _Record, eventSourceARN: string, awsRegion: string): DynamoDBRecord => {
  const change = record.dynamodb ?? {};
  const dynamodb: StreamRecord = {};
  if (change.ApproximateCreationDateTime) dynamodb.ApproximateCreationDateTime = epochSeconds(change.ApproximateCreationDateTime);
  if (change.Keys) dynamodb.Keys = toLambdaImage(change.Keys);
  if (change.NewImage) dynamodb.NewImage = toLambdaImage(change.NewImage);
  if (change.OldImage) dynamodb.OldImage = toLambdaImage(change.OldImage);
  if (change.SequenceNumber !== undefined) dynamodb.SequenceNumber = change.SequenceNumber;
  if (change.SizeBytes !== undefined) dynamodb.SizeBytes = change.SizeBytes;
  if (change.StreamViewType) dynamodb.StreamViewType = change.StreamViewType;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: record.eventSource ?? 'aws:dynamodb',
    awsRegion,
    dynamodb,
    eventSourceARN,
  };
};

/** How many of the batch's records an invocation's outcome leaves done (docs/architecture.md#the-local-stream-poller). */
const recordsDone = (records: DynamoDBRecord[], outcome: InvocationOutcome): number => {
  if ('error' in outcome) return 0;
  const failures: unknown = (outcome.response as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures;
  if (failures === undefined || failures === null) return records.length;
  if (!Array.isArray(failures)) return 0;
  const positions = new Map(records.map((record, index) => [record.dynamodb?.SequenceNumber, index]));
  let failedFrom = records.length;
  for (const failure of failures) {
    const id: unknown = (failure as { itemIdentifier?: unknown } | null | undefined)?.itemIdentifier;
    const position = typeof id === 'string' && id !== '' ? positions.get(id) : undefined;
    if (position === undefined) return 0;
    failedFrom = Math.min(failedFrom, position);
  }
  return failedFrom;
};

type Batch = {
  records: _Record[];
  /** When the filters passed over records up to its end: the last record it reaches (the checkpoint on success) and how many were passed over. */
  through?: { record: _Record; passedOver: number };
  /** How many times these very records were sent again (a split starts a new batch at 0). */
  retries: number;
  /** Its last invocation, for the on-failure record. */
  lastInvocation?: { requestId: string; functionArn: string; functionError?: string };
  /** Given up: the record for onBatchDiscarded, until it has taken it. */
  discarded?: OnFailureRecord;
};

type ShardState = {
  shardId: string;
  parentShardId?: string;
  /** The last sequence number read (from the checkpoint on): an expired iterator opens again after it. */
  readUpTo?: string;
  iterator?: string;
  /** GetRecords gave no NextShardIterator: the shard is closed and read to its end. */
  exhausted: boolean;
  /** Read and not yet done with: the batch in progress first, then the rest of the read and the other halves of its splits, in order. */
  pending: Batch[];
};

const isDone = (shard: ShardState) => shard.exhausted && shard.pending.length === 0;

const sequenceNumberOf = (record: _Record | undefined) => record?.dynamodb?.SequenceNumber ?? '';

const isoSeconds = (date: Date | undefined) => (date ?? new Date(0)).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** GetRecords returns 1,000 records at most. */
const GET_RECORDS_LIMIT = 1000;

const emptyResult = () => ({ invocations: 0, records: 0, checkpointed: 0, discarded: 0 });

/** What the on-failure destination gets for a batch given up after its last retry. */
const onFailureRecord = (shardId: string, batch: Batch, streamArn: string, functionName: string) => {
  const first = batch.records[0];
  const last = batch.records.at(-1);
  const { lastInvocation } = batch;
  return {
    requestContext: {
      requestId: lastInvocation?.requestId ?? '',
      functionArn: lastInvocation?.functionArn ?? lambdaContext(functionName).invokedFunctionArn,
      condition: 'RetryAttemptsExhausted' as const,
      approximateInvokeCount: batch.retries + 1,
    },
    responseContext: {
      statusCode: 200,
      executedVersion: '$LATEST',
      ...(lastInvocation?.functionError ? { functionError: lastInvocation.functionError } : {}),
    },
    version: '1.0' as const,
    timestamp: new Date().toISOString(),
    DDBStreamBatchInfo: {
      shardId,
      startSequenceNumber: sequenceNumberOf(first),
      endSequenceNumber: sequenceNumberOf(last),
      // ISO 8601 to the second (2019-11-14T00:13:19Z), where the timestamp has milliseconds.
      approximateArrivalOfFirstRecord: isoSeconds(first?.dynamodb?.ApproximateCreationDateTime),
      approximateArrivalOfLastRecord: isoSeconds(last?.dynamodb?.ApproximateCreationDateTime),
      batchSize: batch.records.length,
      streamArn,
    },
  };
};

/** A read's records in batches of up to `batchSize` that pass the filters; those passed over after the last make a batch of none, to move the checkpoint. */
const batchesOf = (read: _Record[], batchSize: number, passes: (record: _Record) => boolean) => {
  const batches: Batch[] = [];
  let records: _Record[] = [];
  let passedOver = 0;
  read.forEach((record, index) => {
    if (passes(record)) records.push(record);
    else passedOver += 1;
    if (records.length < batchSize && index < read.length - 1) return;
    batches.push({ records, retries: 0, ...(passedOver > 0 ? { through: { record, passedOver } } : {}) });
    records = [];
    passedOver = 0;
  });
  return batches;
};

/** The stream's shards as the poller knows them, listed again when `listAgain` says so (reading on from their checkpoints). */
const shardList = (client: DynamoDBStreamsClient, streamArn: string, checkpoints: Checkpoints) => {
  const shards = new Map<string, ShardState>();
  const state = {
    shards,
    // New shards appear when others close (DynamoDB Local rolls its shard over): list again once one ends.
    listAgain: true,
    list: async () => {
      const { StreamDescription } = await client.send(new DescribeStreamCommand({ StreamArn: streamArn }));
      const listed = StreamDescription?.Shards ?? [];
      const ids = new Set(listed.map((shard) => shard.ShardId));
      for (const [shardId, shard] of shards) if (!ids.has(shardId) && isDone(shard)) shards.delete(shardId);
      for (const { ShardId: shardId, ParentShardId: parentShardId } of listed)
        if (shardId && !shards.has(shardId))
          shards.set(shardId, { shardId, parentShardId, readUpTo: await checkpoints.get(shardId), exhausted: false, pending: [] });
      state.listAgain = false;
    },
    /** Readable: not done, and its parent (if still known) read to its end. */
    isReadable: (shard: ShardState) => {
      if (isDone(shard)) return false;
      const parent = shard.parentShardId ? shards.get(shard.parentShardId) : undefined;
      return !parent || isDone(parent);
    },
  };
  return state;
};

/** Reads a shard's next records from where it stands: an expired iterator is opened again once, past the retention from TRIM_HORIZON. */
const shardReader = (client: DynamoDBStreamsClient, streamArn: string, readLimit: number, onError: (error: Error) => void) => {
  /** A shard's iterator, after the last record read, else (or past the retention) from TRIM_HORIZON. */
  const openIterator = async (shard: ShardState): Promise<string> => {
    const open = async (ShardIteratorType: ShardIteratorType, SequenceNumber?: string) => {
      const input = { StreamArn: streamArn, ShardId: shard.shardId, ShardIteratorType, SequenceNumber };
      const { ShardIterator } = await client.send(new GetShardIteratorCommand(input));
      if (!ShardIterator) throw new Error(`shard ${shard.shardId}: GetShardIterator returned no iterator`);
      return ShardIterator;
    };
    if (!shard.readUpTo) return open('TRIM_HORIZON');
    try {
      return await open('AFTER_SEQUENCE_NUMBER', shard.readUpTo);
    } catch (error) {
      if (errorName(error) !== 'TrimmedDataAccessException') throw error;
      const records = `shard ${shard.shardId}: the records after ${shard.readUpTo}`;
      onError(new Error(`${records} are past the stream's retention; reading on from TRIM_HORIZON`));
      return open('TRIM_HORIZON');
    }
  };

  /** The next records of a shard; an expired iterator is opened again once. */
  return async (shard: ShardState): Promise<_Record[]> => {
    for (let attempt = 0; attempt < 2 && !shard.exhausted; attempt++) {
      shard.iterator ??= await openIterator(shard);
      try {
        const { Records = [], NextShardIterator } = await client.send(
          new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: readLimit }),
        );
        shard.iterator = NextShardIterator;
        if (!NextShardIterator) shard.exhausted = true;
        const last = sequenceNumberOf(Records.at(-1));
        if (last) shard.readUpTo = last;
        return Records;
      } catch (error) {
        if (errorName(error) !== 'ExpiredIteratorException' && errorName(error) !== 'TrimmedDataAccessException') throw error;
        shard.iterator = undefined;
      }
    }
    return [];
  };
};

type Settling = Pick<StreamPollerOptions, 'onBatchDiscarded' | 'streamArn' | 'functionName'> & {
  checkpoints: Checkpoints;
  maxRetryAttempts: number;
  bisectOnError: boolean;
};

/** What the mapping does with a batch once invoked, and with one given up: checkpoint, split, retry or hand to the on-failure destination. */
const batchSettler = ({ checkpoints, maxRetryAttempts, bisectOnError, onBatchDiscarded, streamArn, functionName }: Settling) => {
  const checkpoint = async (shard: ShardState, record: _Record | undefined) => {
    const sequenceNumber = sequenceNumberOf(record);
    if (sequenceNumber) await checkpoints.set(shard.shardId, sequenceNumber);
  };

  /** Hands a given-up batch to the on-failure destination, then moves past it; returns the records skipped. */
  const discard = async (shard: ShardState, batch: Batch, discarded: OnFailureRecord) => {
    await onBatchDiscarded(discarded);
    shard.pending.shift();
    await checkpoint(shard, batch.records.at(-1));
    return batch.records.length;
  };

  /** Sends the failed batch again, or gives it up after its last retry; returns the records given up. */
  const retryOrDiscard = async (shard: ShardState, batch: Batch) => {
    if (maxRetryAttempts < 0 || batch.retries < maxRetryAttempts) {
      shard.pending[0] = { ...batch, retries: batch.retries + 1 };
      return 0;
    }
    const discarded = onFailureRecord(shard.shardId, batch, streamArn, functionName);
    shard.pending[0] = { ...batch, discarded };
    return discard(shard, batch, discarded);
  };

  /** Checkpoints, splits, retries or gives up the batch in progress after `done` of its records were done; returns the records moved past and given up. */
  const settle = async (shard: ShardState, batch: Batch, done: number) => {
    if (done === batch.records.length) {
      shard.pending.shift();
      await checkpoint(shard, batch.through?.record ?? batch.records.at(-1));
      return { checkpointed: done + (batch.through?.passedOver ?? 0), discarded: 0 };
    }
    if (done > 0) {
      // The records before the lowest reported one are done; the rest is retried (as a new batch with bisection).
      const rest = { ...batch, records: batch.records.slice(done) };
      shard.pending[0] = bisectOnError ? { records: rest.records, retries: 0, through: rest.through } : rest;
      await checkpoint(shard, batch.records[done - 1]);
      const discarded = bisectOnError ? 0 : await retryOrDiscard(shard, rest);
      return { checkpointed: done + discarded, discarded };
    }
    if (bisectOnError && batch.records.length > 1) {
      const half = Math.ceil(batch.records.length / 2);
      const halves = [batch.records.slice(0, half), batch.records.slice(half)] as const;
      shard.pending.splice(0, 1, { records: halves[0], retries: 0 }, { records: halves[1], retries: 0, through: batch.through });
      return { checkpointed: 0, discarded: 0 };
    }
    const discarded = await retryOrDiscard(shard, batch);
    return { checkpointed: discarded, discarded };
  };
  return { settle, discard };
};

export const createStreamPoller = (options: StreamPollerOptions) => {
  const { client, streamArn, handler, functionName, filterPatterns = [] } = options;
  for (const pattern of filterPatterns) checkFilterPattern(pattern);
  // The mapping's settings, with Lambda's defaults where it has one.
  const batchSize = Math.min(options.batchSize ?? 100, GET_RECORDS_LIMIT);
  const maxRetryAttempts = options.maxRetryAttempts ?? 10;
  const bisectOnError = options.bisectOnError ?? true;
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const checkpoints = options.checkpoints ?? memoryCheckpoints();
  const onError = options.onError ?? ((error: Error) => console.error(`[${functionName}] ${error.message}`));
  // Filtered, a batch is made from as many records as it takes: read as many as GetRecords gives.
  const readLimit = filterPatterns.length > 0 ? GET_RECORDS_LIMIT : batchSize;
  const lambdaRecord = (record: _Record) => toDynamoDBRecord(record, streamArn, region);

  const known = shardList(client, streamArn, checkpoints);
  const read = shardReader(client, streamArn, readLimit, onError);

  const { settle, discard } = batchSettler({ ...options, checkpoints, maxRetryAttempts, bisectOnError });

  /** One step of one shard: read its next batches if none is pending, invoke with the first, then checkpoint, retry, split or give up. */
  const pollShard = async (shard: ShardState) => {
    if (shard.pending.length === 0)
      shard.pending = batchesOf(await read(shard), batchSize, (record) => passesFilters(lambdaRecord(record), filterPatterns));
    let batch = shard.pending[0];
    if (!batch) return emptyResult();
    if (batch.discarded) {
      const discarded = await discard(shard, batch, batch.discarded);
      return { ...emptyResult(), checkpointed: discarded, discarded };
    }
    // A batch of none (every record passed over) is done without an invocation.
    if (batch.records.length === 0) return { ...emptyResult(), ...(await settle(shard, batch, 0)) };

    const records = batch.records.map(lambdaRecord);
    const { context, outcome } = await invokeWith(handler, { Records: records }, functionName, options.timeoutSeconds);
    if ('error' in outcome)
      onError(new Error(`handler failed on ${records.length} record(s) of ${shard.shardId}: ${asError(outcome.error).message}`));
    const functionError = 'error' in outcome ? { functionError: 'Unhandled' } : {};
    batch = { ...batch, lastInvocation: { requestId: context.awsRequestId, functionArn: context.invokedFunctionArn, ...functionError } };
    shard.pending[0] = batch;
    return { invocations: 1, records: records.length, ...(await settle(shard, batch, recordsDone(records, outcome))) };
  };

  const round = async () => {
    if (known.listAgain || ![...known.shards.values()].some(known.isReadable)) await known.list();
    const total = emptyResult();
    // DynamoDB Local's shards form one line, each closed before its child: one at most is readable at a time.
    for (const shard of [...known.shards.values()].filter(known.isReadable)) {
      const result = await pollShard(shard);
      for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += result[key];
      // A shard read to its end lets its children go: list the shards again on the next round.
      if (isDone(shard)) known.listAgain = true;
    }
    return total;
  };

  let rounds: Promise<unknown> = Promise.resolve();
  /** One round (the shard list when due, then one step per shard); calls wait for the round in progress. */
  const pollOnce = () => {
    const next = rounds.then(round);
    rounds = next.catch(() => undefined);
    return next;
  };
  // Straight on after a round that moved a checkpoint, after pollIntervalMs when it had nothing.
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  return { pollOnce, ...pollingLoop(async () => ((await pollOnce()).checkpointed > 0 ? 0 : pollIntervalMs), onError) };
};
