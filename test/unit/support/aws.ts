/**
 * The AWS clients every unit test mocks, and the aws-sdk-client-mock-vitest matchers
 * (toHaveReceivedCommandWith, ...). Importing this module is enough to get both.
 */
import 'aws-sdk-client-mock-vitest/extend';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  TransactionCanceledException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';

export const ddbMock = mockClient(DynamoDBDocumentClient);
export const sqsMock = mockClient(SQSClient);

export const resetAwsMocks = () => {
  ddbMock.reset();
  sqsMock.reset();
};

type Code = 'None' | 'ConditionalCheckFailed' | 'TransactionConflict';

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
