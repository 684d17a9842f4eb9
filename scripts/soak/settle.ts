import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localClientConfig } from '#local/aws-env';
import type { LocalStack } from '#local/stack';
import { STAGES, type Stage } from '#shared/config';
import { type WorkKind, workEntries } from '#shared/db/entities/owed-work';

/**
 * After the workload: the work it left owed must be done before the data is checked. Waits until,
 * on both stages, the orders and follow-ups queues hold no message (visible, in flight or
 * delayed) and no list block of a soak merchant is marked for recount, QUIET_POLLS times in a row
 * a second apart (the change feed reads the stream four times a second and retries a failed batch
 * within a second or two, so a quiet spell that long means it is caught up); bounded by
 * `settleSeconds`. A message the consumer failed on comes back only after the queue's visibility
 * timeout (60 s), so the bound is well above it.
 */

export type Backlog = { messages: number; deadLetters: number; followUps: number; parked: number; recount: number; notify: number };

const QUIET_POLLS = 5;
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

/** Up to 1,000 entries of a kind per merchant: enough to tell "none" from "some" and to print how many. */
const entries = async (stack: LocalStack, stage: Stage, merchantIds: readonly string[], kind: WorkKind) => {
  const counts = await Promise.all(merchantIds.map(async (id) => (await workEntries(stack.stages[stage].store, id, kind, 0, 1000)).length));
  return counts.reduce((sum, n) => sum + n, 0);
};

/** What is still owed on each stage right now, for the given merchants per stage. */
export const readBacklog = async (
  stack: LocalStack,
  sqs: SQSClient,
  merchants: Record<Stage, readonly string[]>,
): Promise<Record<Stage, Backlog>> => {
  const read = async (stage: Stage): Promise<Backlog> => {
    const info = stack.stages[stage];
    const [messages, deadLetters, followUps, parked, recount, notify] = await Promise.all([
      queueDepth(sqs, info.ordersQueueUrl),
      queueDepth(sqs, info.dlqUrl),
      queueDepth(sqs, info.queueUrls['follow-ups']),
      queueDepth(sqs, info.queueUrls.parked),
      entries(stack, stage, merchants[stage], 'RECOUNT'),
      entries(stack, stage, merchants[stage], 'NOTIFY'),
    ]);
    return { messages, deadLetters, followUps, parked, recount, notify };
  };
  const [live, sandbox] = await Promise.all(STAGES.map(read));
  return { live, sandbox } as Record<Stage, Backlog>;
};

const idle = (backlog: Record<Stage, Backlog>) =>
  Object.values(backlog).every((stage) => stage.messages === 0 && stage.followUps === 0 && stage.recount === 0);

export const createSqsClient = (stack: LocalStack) =>
  new SQSClient({ endpoint: stack.endpoints.sqs, useQueueUrlAsEndpoint: false, ...localClientConfig });

export const settle = async (
  stack: LocalStack,
  sqs: SQSClient,
  merchants: Record<Stage, readonly string[]>,
  settleSeconds: number,
): Promise<SettleResult> => {
  const start = Date.now();
  let quietPolls = 0;
  let backlog = await readBacklog(stack, sqs, merchants);
  while (Date.now() - start < settleSeconds * 1000) {
    quietPolls = idle(backlog) ? quietPolls + 1 : 0;
    if (quietPolls >= QUIET_POLLS) return { settled: true, seconds: (Date.now() - start) / 1000, backlog };
    await new Promise((resolve) => setTimeout(resolve, 1000));
    backlog = await readBacklog(stack, sqs, merchants);
  }
  return { settled: idle(backlog), seconds: (Date.now() - start) / 1000, backlog };
};
