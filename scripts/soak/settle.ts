import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localClientConfig } from '#local/aws-env';
import type { LocalStack } from '#local/stack';
import { STAGES, type Stage } from '#shared/config';
import { type OutboxKind, outboxEntries } from '#shared/db/entities/outbox';

/**
 * After the workload: the work it left owed must be done before the data is checked. Waits until,
 * on both stages, the orders queue holds no message (visible, in flight or delayed), no order is
 * on the outbox (the relay re-sends what SQS refused) and no list block is marked for recount
 * (the count-repair worker), twice in a row a second apart; bounded by `settleSeconds`. A message
 * the consumer failed on comes back only after the queue's visibility timeout (60 s), so the
 * bound is well above it.
 */

export type Backlog = { messages: number; deadLetters: number; outbox: number; recount: number; notify: number };
export type SettleResult = { settled: boolean; seconds: number; backlog: Record<Stage, Backlog> };

const queueDepth = async (sqs: SQSClient, queueUrl: string) => {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0)
  );
};

/** Up to 1,000 entries of a kind: enough to tell "none" from "some" and to print how many. */
const entries = async (stack: LocalStack, stage: Stage, kind: OutboxKind) =>
  (await outboxEntries(stack.stages[stage].store, kind, 0, 1000)).length;

/** What is still owed on each stage right now. */
export const readBacklog = async (stack: LocalStack, sqs: SQSClient): Promise<Record<Stage, Backlog>> => {
  const read = async (stage: Stage): Promise<Backlog> => {
    const info = stack.stages[stage];
    const [messages, deadLetters, outbox, recount, notify] = await Promise.all([
      queueDepth(sqs, info.ordersQueueUrl),
      queueDepth(sqs, info.dlqUrl),
      entries(stack, stage, 'OUTBOX'),
      entries(stack, stage, 'RECOUNT'),
      entries(stack, stage, 'NOTIFY'),
    ]);
    return { messages, deadLetters, outbox, recount, notify };
  };
  const [live, sandbox] = await Promise.all(STAGES.map(read));
  return { live, sandbox } as Record<Stage, Backlog>;
};

const idle = (backlog: Record<Stage, Backlog>) =>
  Object.values(backlog).every((stage) => stage.messages === 0 && stage.outbox === 0 && stage.recount === 0);

export const createSqsClient = (stack: LocalStack) =>
  new SQSClient({ endpoint: stack.endpoints.sqs, useQueueUrlAsEndpoint: false, ...localClientConfig });

export const settle = async (stack: LocalStack, sqs: SQSClient, settleSeconds: number): Promise<SettleResult> => {
  const start = Date.now();
  let quietPolls = 0;
  let backlog = await readBacklog(stack, sqs);
  while (Date.now() - start < settleSeconds * 1000) {
    quietPolls = idle(backlog) ? quietPolls + 1 : 0;
    if (quietPolls >= 2) return { settled: true, seconds: (Date.now() - start) / 1000, backlog };
    await new Promise((resolve) => setTimeout(resolve, 1000));
    backlog = await readBacklog(stack, sqs);
  }
  return { settled: idle(backlog), seconds: (Date.now() - start) / 1000, backlog };
};
