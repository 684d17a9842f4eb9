import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { asError } from '#shared/errors';
import { lambdaContext } from './apigw';
import { invokeScoped } from './invocation-scope';

/**
 * Local stand-in for Lambda's SQS event source mapping: long-polls a queue, hands each batch to
 * the same handler as an SQSEvent, and deletes the messages the handler did not report in
 * `batchItemFailures`. As in AWS:
 * - a handler that throws (or reports an id that is not in the batch) fails the whole batch;
 * - failed messages stay on the queue, come back after the visibility timeout, and move to the
 *   DLQ after the queue's maxReceiveCount.
 */

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
  region?: string;
  /** Receive loops running at once (the event source mapping's concurrent batches); default 1. */
  concurrency?: number;
  /** Receive, handler and delete errors; the loop backs off and carries on. */
  onError?: (error: Error) => void;
};

export type PollResult = { received: number; deleted: number; failed: string[] };

export type SqsPoller = {
  /** One receive -> invoke -> delete cycle. */
  pollOnce: (waitTimeSeconds?: number) => Promise<PollResult>;
  /** Polls until stop(). */
  start: () => void;
  stop: () => Promise<void>;
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

/** Which messages to delete after the handler ran, by the event source mapping's rules. */
export const messagesToDelete = (
  records: SQSRecord[],
  outcome: { response: SQSBatchResponse | undefined } | { error: unknown },
): SQSRecord[] => {
  if ('error' in outcome) return [];
  const failures = outcome.response?.batchItemFailures ?? [];
  const ids = new Set(records.map((record) => record.messageId));
  if (failures.some((failure) => !failure.itemIdentifier || !ids.has(failure.itemIdentifier))) return [];
  const failed = new Set(failures.map((failure) => failure.itemIdentifier));
  return records.filter((record) => !failed.has(record.messageId));
};

export const createSqsPoller = (options: SqsPollerOptions): SqsPoller => {
  const { client, queueUrl, handler, functionName } = options;
  const batchSize = options.batchSize ?? 10;
  const region = options.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const onError = options.onError ?? ((error: Error) => console.error(`[${functionName}] ${error.message}`));
  let queueArn: string | undefined;
  const aborts = new Set<AbortController>();
  let loop: Promise<unknown> | undefined;
  let stopping = false;

  const arn = async () => {
    if (!queueArn) {
      const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
      queueArn = Attributes?.QueueArn ?? `arn:aws:sqs:${region}:000000000000:${queueUrl.split('/').pop()}`;
    }
    return queueArn;
  };

  const pollOnce = async (waitTimeSeconds = options.waitTimeSeconds ?? 20): Promise<PollResult> => {
    const abort = new AbortController();
    aborts.add(abort);
    const { Messages = [] } = await client
      .send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: batchSize,
          WaitTimeSeconds: waitTimeSeconds,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: abort.signal },
      )
      .finally(() => aborts.delete(abort));
    if (Messages.length === 0) return { received: 0, deleted: 0, failed: [] };
    const eventSourceARN = await arn();
    const records = Messages.map((message) => toSqsRecord(message, eventSourceARN, region));
    let outcome: { response: SQSBatchResponse | undefined } | { error: unknown };
    try {
      const context = lambdaContext(functionName);
      outcome = { response: await invokeScoped(context, () => handler({ Records: records }, context)) };
    } catch (error) {
      onError(new Error(`handler failed, the whole batch will be retried: ${asError(error).message}`));
      outcome = { error };
    }
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
    const deleted = new Set(toDelete.map((record) => record.messageId));
    return {
      received: records.length,
      deleted: toDelete.length,
      failed: records.filter((record) => !deleted.has(record.messageId)).map((record) => record.messageId),
    };
  };

  const run = async () => {
    while (!stopping) {
      try {
        await pollOnce();
      } catch (error) {
        if (stopping) break;
        onError(asError(error));
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  };

  return {
    pollOnce,
    start: () => {
      if (loop) return;
      stopping = false;
      loop = Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, run));
    },
    stop: async () => {
      stopping = true;
      for (const abort of aborts) abort.abort();
      await loop;
      loop = undefined;
    },
  };
};
