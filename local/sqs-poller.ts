import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { asError } from '#shared/errors';
import { type InvocationOutcome, invokeWith, pollingLoop } from './loop';

/** Local stand-in for Lambda's SQS event source mapping: deletes what the handler did not report in batchItemFailures. */

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export type SqsPollerOptions = {
  client: SQSClient;
  queueUrl: string;
  handler: SqsHandler;
  /** The function's name, for its Lambda context. */
  functionName: string;
  batchSize?: number;
  /** Long-poll wait per ReceiveMessage (the event source mapping uses 20 s). */
  waitTimeSeconds?: number;
  /** The function's timeout, for context.getRemainingTimeInMillis (default: lambdaContext's). */
  timeoutSeconds?: number;
  /** Batches handled at once (the event source mapping's maximum concurrency); default 1. */
  concurrency?: number;
  /** Receive, handler and delete errors; the loop backs off and carries on. */
  onError?: (error: Error) => void;
};

const lambdaMessageAttributes = (message: Message): SQSMessageAttributes =>
  Object.fromEntries(
    Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
      name,
      {
        dataType: value.DataType ?? 'String',
        stringValue: value.StringValue,
        binaryValue: value.BinaryValue ? Buffer.from(value.BinaryValue).toString('base64') : undefined,
        stringListValues: value.StringListValues ?? [],
        binaryListValues: (value.BinaryListValues ?? []).map((item) => Buffer.from(item).toString('base64')),
      },
    ]),
  );

/** The record shape Lambda's SQS integration sends. */
export const toSqsRecord = (message: Message, eventSourceARN: string, awsRegion: string): SQSRecord => {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? '000000000000',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(attributes.MessageGroupId ? { MessageGroupId: attributes.MessageGroupId } : {}),
      ...(attributes.MessageDeduplicationId ? { MessageDeduplicationId: attributes.MessageDeduplicationId } : {}),
      ...(attributes.SequenceNumber ? { SequenceNumber: attributes.SequenceNumber } : {}),
    },
    messageAttributes: lambdaMessageAttributes(message),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN,
    awsRegion,
  };
};

/** Which messages to delete after the handler ran: as in AWS, a throw or an id not in the batch fails the whole batch. */
export const messagesToDelete = (records: SQSRecord[], outcome: InvocationOutcome): SQSRecord[] => {
  if ('error' in outcome) return [];
  const failures = (outcome.response as SQSBatchResponse | undefined)?.batchItemFailures ?? [];
  const ids = new Set(records.map((record) => record.messageId));
  if (failures.some((failure) => !failure.itemIdentifier || !ids.has(failure.itemIdentifier))) return [];
  const failed = new Set(failures.map((failure) => failure.itemIdentifier));
  return records.filter((record) => !failed.has(record.messageId));
};

/** The most messages one ReceiveMessage returns. */
const SQS_MAX_RECEIVE = 10;

export const createSqsPoller = (options: SqsPollerOptions) => {
  const { client, queueUrl, handler, functionName } = options;
  const batchSize = options.batchSize ?? 10;
  const waitTimeSeconds = options.waitTimeSeconds ?? 20;
  const region = process.env.AWS_REGION ?? 'us-east-1';
  const onError = options.onError ?? ((error: Error) => console.error(`[${functionName}] ${error.message}`));
  let queueArn: string | undefined;
  const aborts = new Set<AbortController>();

  const arn = async () => {
    if (!queueArn) {
      const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
      queueArn = Attributes?.QueueArn ?? `arn:aws:sqs:${region}:000000000000:${queueUrl.split('/').pop()}`;
    }
    return queueArn;
  };

  const receive = async (waitTimeSeconds: number, maxMessages = batchSize): Promise<Message[]> => {
    const abort = new AbortController();
    aborts.add(abort);
    const { Messages = [] } = await client
      .send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: maxMessages,
          WaitTimeSeconds: waitTimeSeconds,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: abort.signal },
      )
      .finally(() => aborts.delete(abort));
    return Messages;
  };

  /** Invokes the handler with one received batch and deletes what it did not report failed. */
  const handleBatch = async (messages: Message[]) => {
    if (messages.length === 0) return { received: 0, deleted: 0 };
    const eventSourceARN = await arn();
    const records = messages.map((message) => toSqsRecord(message, eventSourceARN, region));
    const { outcome } = await invokeWith(handler, { Records: records }, functionName, options.timeoutSeconds);
    if ('error' in outcome) onError(new Error(`handler failed, the whole batch will be retried: ${asError(outcome.error).message}`));
    const toDelete = messagesToDelete(records, outcome);
    if (toDelete.length > 0) {
      const result = await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: toDelete.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
        }),
      );
      for (const failure of result.Failed ?? [])
        onError(new Error(`could not delete a processed message: ${failure.Message ?? failure.Code}`));
    }
    return { received: records.length, deleted: toDelete.length };
  };

  const pollOnce = async (wait = waitTimeSeconds) => handleBatch(await receive(wait));

  // As the event source mapping: up to 10 messages a receive, one invocation per `batchSize` of them, `concurrency` at once.
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const inFlight = new Set<Promise<unknown>>();
  const round = async () => {
    if (inFlight.size >= concurrency) {
      await Promise.race(inFlight);
      return 0;
    }
    const room = Math.min(SQS_MAX_RECEIVE, (concurrency - inFlight.size) * batchSize);
    const messages = await receive(waitTimeSeconds, Math.max(batchSize, room));
    for (let start = 0; start < messages.length; start += batchSize) {
      const batch: Promise<unknown> = handleBatch(messages.slice(start, start + batchSize))
        .catch((error: unknown) => onError(asError(error)))
        .finally(() => inFlight.delete(batch));
      inFlight.add(batch);
    }
    return 0;
  };

  const loop = pollingLoop(round, onError, () => {
    for (const abort of aborts) abort.abort();
  });
  const stop = async () => {
    await loop.stop();
    await Promise.allSettled(inFlight);
  };
  return { pollOnce, start: loop.start, stop };
};
