/**
 * The AWS clients every unit test mocks, and the aws-sdk-client-mock-vitest matchers
 * (toHaveReceivedCommandWith, ...). Importing this module is enough to get both.
 */
import 'aws-sdk-client-mock-vitest/extend';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DynamoDBServiceException,
  ProvisionedThroughputExceededException,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';

export const ddbMock = mockClient(DynamoDBDocumentClient);
export const sqsMock = mockClient(SQSClient);

export const resetAwsMocks = () => {
  ddbMock.reset();
  sqsMock.reset();
};

/** The reason codes DynamoDB gives a part of a cancelled transaction (the ones the code under test meets). */
type Code = 'None' | 'ConditionalCheckFailed' | 'TransactionConflict' | 'ThrottlingError' | 'ProvisionedThroughputExceeded';

/**
 * What DynamoDB throws when a TransactWriteItems is cancelled. DynamoDB gives one reason per item,
 * in the order of TransactItems; the code under test names its parts and maps them back.
 */
export const transactionCanceled = (...reasons: (Code | { Code: Code; Item?: Record<string, AttributeValue> })[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
    $metadata: {},
    CancellationReasons: reasons.map((reason) => (typeof reason === 'string' ? { Code: reason } : reason)),
  });

/**
 * What DynamoDB throws when an UpdateItem condition fails. With ReturnValuesOnConditionCheckFailure
 * ALL_OLD, `Item` is the item as it was, in AttributeValue form (the document client does not
 * unmarshall errors); absent when there was no item.
 */
export const conditionFailed = (item?: Record<string, AttributeValue>) =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {}, ...(item ? { Item: item } : {}) });

/**
 * What DynamoDB throws when a single-item write meets a transaction in progress on its item, or
 * when two transactions conflict (as a cancellation, see `transactionCanceled('TransactionConflict')`).
 * DynamoDB Local never produces either.
 */
export const transactionConflict = () =>
  new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });

/**
 * What DynamoDB throws when a single-item write goes over the provisioned capacity of its table,
 * index or partition (the SDK retries it, then hands it over).
 */
export const provisionedThroughputExceeded = () =>
  new ProvisionedThroughputExceededException({
    message: 'The level of configured provisioned throughput for the table was exceeded.',
    $metadata: { httpStatusCode: 400, attempts: 3 },
  });

/** What DynamoDB (on-demand) throws when a request goes over the table's or the account's throughput. */
export const throttling = () =>
  new ThrottlingException({
    message: 'Throughput exceeds the current capacity of your table or index.',
    $metadata: { httpStatusCode: 400 },
  });

/** What the SDK's node HTTP handler throws when nothing listens at the endpoint (a plain Node error). */
export const connectionRefused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED', errno: -111, syscall: 'connect' });

/** What the SDK throws when no answer came within its request timeout (the call may have been applied). */
export const timedOut = () => Object.assign(new Error('Connection timed out after 2000 ms'), { name: 'TimeoutError', code: 'ETIMEDOUT' });

/** A 5xx answer of the service. */
export const serviceUnavailable = (httpStatusCode = 503) =>
  new DynamoDBServiceException({
    name: httpStatusCode === 500 ? 'InternalServerError' : 'ServiceUnavailable',
    $fault: 'server',
    $metadata: { httpStatusCode },
    message: 'Service unavailable',
  });

/** An SQS SendMessageBatch answer that accepts the entries whose Id is in `accepted` (all by default) and refuses the rest. */
export const sqsBatchAnswer = (accepted?: string[]) => async (input: SendMessageBatchCommandInput) => {
  const ids = (input.Entries ?? []).map((entry) => entry.Id as string);
  const ok = accepted ?? ids;
  return {
    Successful: ids.filter((id) => ok.includes(id)).map((id) => ({ Id: id, MessageId: `msg-${id}`, MD5OfMessageBody: 'x' })),
    Failed: ids.filter((id) => !ok.includes(id)).map((id) => ({ Id: id, Code: 'InternalError', SenderFault: false })),
  };
};

/** Every message sent to `queueUrl` by SendMessageBatch, in order: its parsed body and its delay. */
export const batchMessagesSentTo = (queueUrl: string) =>
  sqsMock
    .commandCalls(SendMessageBatchCommand)
    .filter((call) => call.args[0].input.QueueUrl === queueUrl)
    .flatMap((call) => call.args[0].input.Entries ?? [])
    .map((entry) => ({ body: JSON.parse(entry.MessageBody ?? '{}'), delay: entry.DelaySeconds }));

/** A Query answer of `count` list index items, each written at `updatedAt` (long ago unless given). */
export const indexItems = (count: number, updatedAt = '2026-01-01T00:00:00.000Z') => ({
  Items: Array.from({ length: count }, () => ({ updated_at: updatedAt })),
  Count: count,
});
