import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localClientConfig } from '#local/aws-env';
import type { LocalStack } from '#local/stack';
import { STAGES, type Stage } from '#shared/config';
import { type WorkKind, workPage } from '#shared/db/entities/owed-work';
import { parkedDeliveryCount } from '#shared/db/entities/webhook-waiting';

/**
 * After the workload: the work it left owed must be done before the data is checked. Waits until,
 * on both stages, the orders, follow-ups and webhooks queues hold no message (visible, in flight or
 * delayed: a webhook retry waiting for its time is a delayed message), no webhook delivery is
 * parked for a held endpoint, no list block of a soak
 * merchant is marked for recount and the change feed caught up, QUIET_POLLS times in a row
 * a second apart (the change feed reads the stream four times a second and retries a failed batch
 * within a second or two, so a quiet spell that long means it is caught up); bounded by
 * `settleSeconds`. A message the consumer failed on comes back only after the queue's visibility
 * timeout (60 s), so the bound is well above it.
 */

export type Backlog = {
  messages: number;
  deadLetters: number;
  followUps: number;
  parked: number;
  recount: number;
  notify: number;
  /** Webhook deliveries still queued (retries waiting for their time included), parked for a held endpoint, and given up to its DLQ. */
  webhooks: number;
  webhooksParked: number;
  webhookDeadLetters: number;
};

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
  const counts = await Promise.all(
    merchantIds.map(async (id) => (await workPage(stack.stages[stage].store, id, kind, 0, 1000)).keys.length),
  );
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
    const [messages, deadLetters, followUps, parked, recount, notify, webhooks, webhooksParked, webhookDeadLetters] = await Promise.all([
      queueDepth(sqs, info.ordersQueueUrl),
      queueDepth(sqs, info.dlqUrl),
      queueDepth(sqs, info.queueUrls['follow-ups']),
      queueDepth(sqs, info.queueUrls.parked),
      entries(stack, stage, merchants[stage], 'RECOUNT'),
      entries(stack, stage, merchants[stage], 'NOTIFY'),
      Promise.all([queueDepth(sqs, info.queueUrls.webhooks), queueDepth(sqs, info.queueUrls['webhooks-slow'])]).then(
        ([main, slow]) => main + slow,
      ),
      Promise.all(merchants[stage].map((id) => parkedDeliveryCount(info.store, id, 1000))).then((counts) =>
        counts.reduce((a, b) => a + b, 0),
      ),
      queueDepth(sqs, info.queueUrls['webhooks-dlq']),
    ]);
    return { messages, deadLetters, followUps, parked, recount, notify, webhooks, webhooksParked, webhookDeadLetters };
  };
  const [live, sandbox] = await Promise.all(STAGES.map(read));
  return { live, sandbox } as Record<Stage, Backlog>;
};

const idle = (backlog: Record<Stage, Backlog>) =>
  Object.values(backlog).every(
    (stage) => stage.messages === 0 && stage.followUps === 0 && stage.recount === 0 && stage.webhooks === 0 && stage.webhooksParked === 0,
  );

export const createSqsClient = (stack: LocalStack) =>
  new SQSClient({ endpoint: stack.endpoints.sqs, useQueueUrlAsEndpoint: false, ...localClientConfig });

/**
 * Empty queues do not prove the change feed caught up: a feed stuck on a record sends nothing, so
 * its queues stay empty. `caughtUp` says whether the feed reached the end of the workload (the
 * soak asks whether each merchant's last order answered 201 has its commission); it is asked
 * only once the queues are quiet.
 */
export const settle = async (
  stack: LocalStack,
  sqs: SQSClient,
  merchants: Record<Stage, readonly string[]>,
  settleSeconds: number,
  caughtUp: () => Promise<boolean> = async () => true,
): Promise<SettleResult> => {
  const start = Date.now();
  let quietPolls = 0;
  let backlog = await readBacklog(stack, sqs, merchants);
  const done = async () => idle(backlog) && (await caughtUp());
  while (Date.now() - start < settleSeconds * 1000) {
    quietPolls = (await done()) ? quietPolls + 1 : 0;
    if (quietPolls >= QUIET_POLLS) return { settled: true, seconds: (Date.now() - start) / 1000, backlog };
    await new Promise((resolve) => setTimeout(resolve, 1000));
    backlog = await readBacklog(stack, sqs, merchants);
  }
  return { settled: await done(), seconds: (Date.now() - start) / 1000, backlog };
};
