import 'aws-sdk-client-mock-vitest/extend';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  SQSServiceException,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { AdminError, redriveDeadLetters } from '#shared/admin/operations';

/**
 * `npm run admin -- redrive`: the message-move task on AWS (here, against the mocked SDK), and the
 * receive/send/delete fallback where the endpoint has no message-move tasks. The fallback also
 * runs against the real SQS emulator in test/integration/redrive.test.ts.
 */
const sqsMock = mockClient(SQSClient);
const DLQ_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/affiliate-merchant-api-live-orders-dlq';
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/affiliate-merchant-api-live-orders';
const DLQ_ARN = 'arn:aws:sqs:eu-west-1:123456789012:affiliate-merchant-api-live-orders-dlq';
const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:affiliate-merchant-api-live-orders';
const target = () => ({ sqs: new SQSClient({ region: 'eu-west-1' }), dlqUrl: DLQ_URL, ordersQueueUrl: QUEUE_URL });

const unknownAction = () =>
  new SQSServiceException({
    name: 'InvalidAction',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: 'Unknown action: StartMessageMoveTask',
  });

const deadLetter = (id: string) => ({
  MessageId: id,
  ReceiptHandle: `rh-${id}`,
  Body: JSON.stringify({ type: 'order.created', merchant_id: 'm', order_uuid: id }),
});

beforeEach(() => {
  sqsMock.reset();
  sqsMock
    .on(GetQueueAttributesCommand, { QueueUrl: DLQ_URL })
    .resolves({ Attributes: { QueueArn: DLQ_ARN, ApproximateNumberOfMessages: '3' } });
  sqsMock
    .on(GetQueueAttributesCommand, { QueueUrl: QUEUE_URL })
    .resolves({ Attributes: { QueueArn: QUEUE_ARN, ApproximateNumberOfMessages: '0' } });
});

describe('redriveDeadLetters', () => {
  it('starts one SQS message-move task from the DLQ to the orders queue and moves nothing by hand', async () => {
    // Prepare
    sqsMock.on(StartMessageMoveTaskCommand).resolves({ TaskHandle: 'task-1' });

    // Act
    const result = await redriveDeadLetters(target());

    // Assess
    expect(result).toEqual({ method: 'message-move-task', task_handle: 'task-1', messages_in_dlq: 3 });
    expect(sqsMock).toHaveReceivedCommandWith(StartMessageMoveTaskCommand, { SourceArn: DLQ_ARN, DestinationArn: QUEUE_ARN });
    expect(sqsMock).not.toHaveReceivedCommand(ReceiveMessageCommand);
  });

  it('falls back to receive, send and delete where the endpoint does not know message-move tasks', async () => {
    // Prepare
    sqsMock.on(StartMessageMoveTaskCommand).rejects(unknownAction());
    sqsMock
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [deadLetter('a'), deadLetter('b')] })
      .resolvesOnce({ Messages: [deadLetter('c')] })
      .resolves({ Messages: [] });
    sqsMock.on(SendMessageBatchCommand).callsFake(async (input) => ({
      Successful: input.Entries.map((entry: { Id: string }) => ({ Id: entry.Id, MessageId: `new-${entry.Id}` })),
      Failed: [],
    }));
    sqsMock.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });

    // Act
    const result = await redriveDeadLetters(target());

    // Assess
    expect(result).toEqual({ method: 'receive-send-delete', moved: 3 });
    const sent = sqsMock.commandCalls(SendMessageBatchCommand).flatMap((call) => call.args[0].input.Entries ?? []);
    expect(sent.map((entry) => JSON.parse(entry.MessageBody ?? '').order_uuid)).toEqual(['a', 'b', 'c']);
    expect(sqsMock.commandCalls(SendMessageBatchCommand).every((call) => call.args[0].input.QueueUrl === QUEUE_URL)).toBe(true);
    const deleted = sqsMock.commandCalls(DeleteMessageBatchCommand).flatMap((call) => call.args[0].input.Entries ?? []);
    expect(deleted.map((entry) => entry.ReceiptHandle)).toEqual(['rh-a', 'rh-b', 'rh-c']);
  });

  it('keeps in the DLQ a message the orders queue refused, and says so', async () => {
    // Prepare
    sqsMock.on(StartMessageMoveTaskCommand).rejects(unknownAction());
    sqsMock
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [deadLetter('a'), deadLetter('b')] })
      .resolves({ Messages: [] });
    sqsMock.on(SendMessageBatchCommand).resolves({
      Successful: [{ Id: '0', MessageId: 'x', MD5OfMessageBody: '' }],
      Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false }],
    });
    sqsMock.on(DeleteMessageBatchCommand).resolves({ Successful: [], Failed: [] });

    // Act
    const run = redriveDeadLetters(target());

    // Assess
    await expect(run).rejects.toThrow(new AdminError('moved 1 message(s); 1 could not be sent to the orders queue and stay in the DLQ'));
    const deleted = sqsMock.commandCalls(DeleteMessageBatchCommand).flatMap((call) => call.args[0].input.Entries ?? []);
    expect(deleted.map((entry) => entry.ReceiptHandle)).toEqual(['rh-a']);
  });

  it('does not fall back on any other error, e.g. a missing permission', async () => {
    // Prepare
    sqsMock
      .on(StartMessageMoveTaskCommand)
      .rejects(
        new SQSServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 }, message: 'not allowed' }),
      );

    // Act
    const run = redriveDeadLetters(target());

    // Assess
    await expect(run).rejects.toMatchObject({ name: 'AccessDenied' });
    expect(sqsMock).not.toHaveReceivedCommand(ReceiveMessageCommand);
  });
});
