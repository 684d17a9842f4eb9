import { type Key, merchantIdOf } from '#shared/db/entities/base';
import { lazyQueueUrl } from './client';
import { encodeMessage, MAX_DELAY_SECONDS, sendMessages } from './send-batch';

const followUpsQueueUrl = lazyQueueUrl('follow-ups');

/**
 * Owed work on one item (an e-mail, a block's recount), looked at when due: the change feed schedules one for every
 * write that sets or moves an item's owed-work entry; the follow-ups worker does the work if it is still owed then.
 */
export type FollowUp = { kind: 'notify' | 'recount'; key: Key; due: string };

/** The delay of a follow-up due at `due`, at least `minDelaySeconds` (within SQS's bounds). */
const delaySecondsUntil = (due: string, minDelaySeconds: number, now = Date.now()): number =>
  Math.min(MAX_DELAY_SECONDS, Math.max(minDelaySeconds, Math.ceil((Date.parse(due) - now) / 1000)));

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
    const value = JSON.parse(body) as Partial<FollowUp> | null;
    if (value?.kind !== 'notify' && value?.kind !== 'recount') return undefined;
    const { key, due } = value;
    if (typeof key?.pk !== 'string' || typeof key.sk !== 'string' || typeof due !== 'string') return undefined;
    return { kind: value.kind, key: { pk: key.pk, sk: key.sk }, due };
  } catch {
    return undefined;
  }
};
