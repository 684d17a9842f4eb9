/**
 * The one classification of what DynamoDB, SQS and SES throw: the write retries, the error
 * envelope (503 or 500) and the X-Ray subsegments all go by it. The errors here have the shapes the
 * SDK hands over (its exception classes, a Node socket error, its TimeoutError).
 */
import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  classifyDependencyError,
  type DependencyFailure,
  isPassingDependencyFailure,
  isRetryableWriteFailure,
  UnprocessedBatch,
} from '#shared/dependency-errors';
import {
  conditionFailed,
  connectionRefused,
  provisionedThroughputExceeded,
  serviceUnavailable,
  throttling,
  timedOut,
  transactionCanceled,
  transactionConflict,
} from './support/aws';

const validationException = () =>
  new DynamoDBServiceException({
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: 'One or more parameter values were invalid',
  });

const ERRORS: [string, () => unknown, DependencyFailure][] = [
  [
    'a batch call whose items DynamoDB kept leaving unprocessed',
    () => new UnprocessedBatch('BatchGetItem kept returning unprocessed items'),
    'throttled',
  ],
  ['a transaction cancelled by a TransactionConflict', () => transactionCanceled('None', 'TransactionConflict'), 'conflict'],
  ['a transaction cancelled by a ThrottlingError', () => transactionCanceled('ThrottlingError', 'None'), 'throttled'],
  [
    'a transaction cancelled by ProvisionedThroughputExceeded',
    () => transactionCanceled('None', 'ProvisionedThroughputExceeded'),
    'throttled',
  ],
  ['a transaction cancelled by a condition', () => transactionCanceled('ConditionalCheckFailed', 'None'), 'refused'],
  [
    'a transaction cancelled by a condition on one part and a conflict on another',
    () => transactionCanceled('ConditionalCheckFailed', 'TransactionConflict'),
    'conflict',
  ],
  ['a TransactionConflictException', transactionConflict, 'conflict'],
  ['a ProvisionedThroughputExceededException', provisionedThroughputExceeded, 'throttled'],
  ['a ThrottlingException', throttling, 'throttled'],
  ['a TimeoutError', timedOut, 'unavailable'],
  ['a refused connection (a plain Error with code ECONNREFUSED)', connectionRefused, 'unavailable'],
  ['a 503 ServiceException', () => serviceUnavailable(503), 'unavailable'],
  ['a 500 InternalServerError', () => serviceUnavailable(500), 'unavailable'],
  ['a ConditionalCheckFailedException', conditionFailed, 'refused'],
  ['a ValidationException', validationException, 'refused'],
  ['a TypeError', () => new TypeError("Cannot read properties of undefined (reading 'pk')"), 'refused'],
  ['a plain Error', () => new Error('ThrottlingException: in the message only'), 'refused'],
  ['something that is not an Error', () => 'ECONNREFUSED', 'refused'],
];

describe('classifyDependencyError', () => {
  it.each(ERRORS)('classifies %s', (_label, error, failure) => {
    // Act
    const classified = classifyDependencyError(error());

    // Assess
    expect(classified).toBe(failure);
  });
});

describe('isPassingDependencyFailure (503 with Retry-After, not 500)', () => {
  it.each(ERRORS)('for %s', (_label, error, failure) => {
    // Act
    const passing = isPassingDependencyFailure(error());

    // Assess
    expect(passing).toBe(failure !== 'refused');
  });
});

describe('isRetryableWriteFailure (retried by the write paths themselves)', () => {
  it.each(ERRORS)('for %s', (_label, error, failure) => {
    // Act
    const retryable = isRetryableWriteFailure(error());

    // Assess
    expect(retryable).toBe(failure === 'conflict' || failure === 'throttled');
  });
});
