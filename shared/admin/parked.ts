import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { merchantOfRecord, reactionsTo } from '#shared/changes/feed';
import { paddedSequence } from '#shared/db/entities/commission-totals';
import type { TableRef } from '#shared/db/table-def';
import { asError } from '#shared/errors';
import { parseFollowUp } from '#shared/queue/follow-ups';
import { readMessageBody } from '#shared/queue/large-bodies';

/** The parked queue, for operators: what nothing retries any more (change records, follow-ups), listed and replayed. */
type ParkedTarget = { sqs: SQSClient; parkedUrl: string; followUpsUrl: string; store: TableRef };

/** Runs the change feed on records: the sequence number of the first that failed, or undefined. */
type ProcessRecords = (records: DynamoDBRecord[]) => Promise<string | undefined>;

type Parked = { message: Message; body: string; attribute: (name: string) => string | undefined };

const RECEIVE_BATCH = 10;

/** Receives up to `limit` parked messages, held invisible for `holdSeconds` while the caller looks at them. */
const receiveParked = async ({ sqs, parkedUrl, store }: ParkedTarget, limit: number, holdSeconds: number): Promise<Parked[]> => {
  const seen = new Map<string, Parked>();
  while (seen.size < limit) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: parkedUrl,
        MaxNumberOfMessages: Math.min(RECEIVE_BATCH, limit - seen.size),
        WaitTimeSeconds: 0,
        VisibilityTimeout: holdSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount'],
      }),
    );
    const fresh = Messages.filter((message) => !seen.has(message.MessageId ?? ''));
    if (fresh.length === 0) break;
    for (const message of fresh) {
      seen.set(message.MessageId ?? '', {
        message,
        body: await readMessageBody(store, message.Body ?? ''),
        attribute: (name) => message.MessageAttributes?.[name]?.StringValue,
      });
    }
  }
  return [...seen.values()];
};

/** Makes messages visible again (a listing, or a replay that left them parked). */
const release = async ({ sqs, parkedUrl }: ParkedTarget, parked: readonly Parked[]) => {
  for (let start = 0; start < parked.length; start += RECEIVE_BATCH) {
    const chunk = parked.slice(start, start + RECEIVE_BATCH);
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: parkedUrl,
        Entries: chunk.map(({ message }, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle, VisibilityTimeout: 0 })),
      }),
    );
  }
};

const recordOf = (body: string): DynamoDBRecord | undefined => {
  try {
    const value = JSON.parse(body) as DynamoDBRecord;
    return value?.dynamodb?.Keys ? value : undefined;
  } catch {
    return undefined;
  }
};

const describe = ({ message, body, attribute }: Parked) => {
  const record = recordOf(body);
  const followUp = record ? undefined : parseFollowUp(body);
  const keys = record?.dynamodb?.Keys ? unmarshall(record.dynamodb.Keys as Record<string, AttributeValue>) : followUp?.key;
  const sent = Number(message.Attributes?.SentTimestamp);
  return {
    message_id: message.MessageId,
    kind: record ? 'change-record' : followUp ? 'follow-up' : 'unknown',
    parked_at: Number.isFinite(sent) ? new Date(sent).toISOString() : null,
    source: attribute('dead_letter_source') ?? (followUp ? 'follow-ups' : null),
    error: attribute('dead_letter_error') ?? null,
    reason: attribute('dead_letter_reason') ?? null,
    key: keys ?? null,
    ...(record ? { event_name: record.eventName, sequence_number: record.dynamodb?.SequenceNumber } : {}),
    ...(followUp ? { follow_up: followUp.kind, due: followUp.due } : {}),
  };
};

/** Lists up to `limit` parked messages and leaves them parked: SQS hands them out in no order, so a sample of a larger queue. */
export const listParked = async (target: ParkedTarget, limit: number) => {
  const parked = await receiveParked(target, limit, 30);
  await release(target, parked);
  return { count: parked.length, parked: parked.map(describe) };
};

/** Carries out one parked message again: why it stays parked, or undefined when it is done and may leave the queue. */
const replayOne = async (target: ParkedTarget, processRecords: ProcessRecords, { body }: Parked): Promise<string | undefined> => {
  const record = recordOf(body);
  if (record) {
    try {
      reactionsTo(record);
    } catch (error) {
      return `still unreadable: ${asError(error).message}`;
    }
    return (await processRecords([record])) === undefined ? undefined : 'its reactions failed again';
  }
  if (!parseFollowUp(body)) return 'neither a change record nor a follow-up';
  await target.sqs.send(new SendMessageCommand({ QueueUrl: target.followUpsUrl, MessageBody: body }));
};

/** A change record's place in the stream, for sorting. */
const streamOrder = ({ body }: Parked) => paddedSequence(recordOf(body)?.dynamodb?.SequenceNumber ?? '');

/** Replays parked messages, change records in stream order (docs/operations.md#work-on-the-parked-queue-parkeddepth). */
export const replayParked = async (target: ParkedTarget, processRecords: ProcessRecords, limit: number) => {
  const parked = (await receiveParked(target, limit, 300)).sort((a, b) => (streamOrder(a) < streamOrder(b) ? -1 : 1));
  const kept: Parked[] = [];
  const left: { message_id: string | undefined; why: string }[] = [];
  const held = new Set<string>();
  for (const entry of parked) {
    const merchant = merchantOfRecord(recordOf(entry.body));
    const why =
      merchant !== undefined && held.has(merchant)
        ? 'an earlier record of its merchant failed again'
        : await replayOne(target, processRecords, entry);
    if (why === undefined) {
      await target.sqs.send(new DeleteMessageCommand({ QueueUrl: target.parkedUrl, ReceiptHandle: entry.message.ReceiptHandle }));
      continue;
    }
    if (merchant !== undefined) held.add(merchant);
    kept.push(entry);
    left.push({ message_id: entry.message.MessageId, why });
  }
  await release(target, kept);
  return { replayed: parked.length - kept.length, left };
};
