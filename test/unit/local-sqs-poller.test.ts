import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSEvent } from 'aws-lambda';
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

  it("gives the handler its function's own timeout, not an API route's", async () => {
    // Prepare: one message; the handler notes the time its context says is left
    sqsMock.on(ReceiveMessageCommand).resolves({ Messages: [{ MessageId: 'm1', ReceiptHandle: 'r1', Body: '{}' }] });
    sqsMock.on(GetQueueAttributesCommand).resolves({ Attributes: { QueueArn: 'arn:aws:sqs:us-east-1:000000000000:q' } });
    sqsMock.on(DeleteMessageBatchCommand).resolves({});
    let remaining = 0;
    const poller = createSqsPoller({
      client: new SQSClient({ region: 'us-east-1' }),
      queueUrl: 'http://localhost/q',
      functionName: 'unit',
      timeoutSeconds: 30,
      handler: async (_event: SQSEvent, context: Context) => {
        remaining = context.getRemainingTimeInMillis();
        return { batchItemFailures: [] };
      },
    });

    // Act
    await poller.pollOnce(0);

    // Assess: a 30 s function has close to 30 s, so a 15 s webhook POST is not cut off at an API route's 10 s
    expect(remaining).toBeGreaterThan(29_000);
    expect(remaining).toBeLessThanOrEqual(30_000);
  });
});
