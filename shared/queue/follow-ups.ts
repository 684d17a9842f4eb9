import * as z from 'zod/mini';
import { merchantIdOf } from '#shared/db/entities/base';
import { lazyQueueUrl } from './client';
import { delaySecondsUntil, encodeMessage, sendMessages } from './send-batch';

const followUpsQueueUrl = lazyQueueUrl('follow-ups');

/** Owed work on one item, looked at when due by the follow-ups worker (`notify`: an e-mail, `recount`: a block, `settle`: numbers). */
const keySchema = z.object({ pk: z.string(), sk: z.string() });
const followUpSchema = z.union([
  z.object({ kind: z.enum(['notify', 'recount']), key: keySchema, due: z.string() }),
  z.object({ kind: z.literal('settle'), key: keySchema, due: z.string(), first: z.int(), last: z.int() }),
]);
export type FollowUp = z.output<typeof followUpSchema>;

/** Sends follow-ups, each delayed until it is due (at least `minDelaySeconds`); returns for each whether SQS took it. */
export const sendFollowUps = (followUps: readonly FollowUp[], minDelaySeconds: number): Promise<boolean[]> =>
  sendMessages(
    followUpsQueueUrl(),
    followUps.map((followUp) => ({
      body: encodeMessage(followUp),
      delaySeconds: delaySecondsUntil(followUp.due, minDelaySeconds),
      group: merchantIdOf(followUp.key.pk),
    })),
  );

export const parseFollowUp = (body: string): FollowUp | undefined => {
  try {
    const parsed = followUpSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};
