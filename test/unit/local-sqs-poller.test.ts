import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqsPoller } from '#local/sqs-poller';
import { sqsMock } from './support/aws';

/** The local stand-in for an SQS event source mapping: several batches at once, like concurrent invocations. */
describe('local SQS poller', () => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    sqsMock.reset();
  });

  it('hands a new batch to the handler while an earlier one is still running, up to its concurrency', async () => {
    // Prepare: every receive returns one message; the handler never finishes until released
    let received = 0;
    sqsMock.on(ReceiveMessageCommand).callsFake(async () => {
      received += 1;
      return { Messages: [{ MessageId: `m${received}`, ReceiptHandle: `r${received}`, Body: '{}' }] };
    });
    sqsMock.on(GetQueueAttributesCommand).resolves({ Attributes: { QueueArn: 'arn:aws:sqs:us-east-1:000000000000:q' } });
    sqsMock.on(DeleteMessageBatchCommand).resolves({});
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const running: string[] = [];
    const poller = createSqsPoller({
      client: new SQSClient({ region: 'us-east-1' }),
      queueUrl: 'http://localhost/q',
      functionName: 'unit',
      concurrency: 3,
      waitTimeSeconds: 0,
      handler: async (event: SQSEvent) => {
        running.push(event.Records[0]?.messageId ?? '');
        await released;
        return { batchItemFailures: [] };
      },
    });

    // Act
    poller.start();
    stop = async () => {
      release();
      await poller.stop();
    };
    await new Promise((resolve) => setTimeout(resolve, 100));

    // Assess: three batches run at once, and no fourth is received until one ends
    expect(running).toEqual(['m1', 'm2', 'm3']);
    expect(received).toBe(3);
  });
});
