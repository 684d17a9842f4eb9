import type { SQSRecord } from 'aws-lambda';
import { functionTable } from '#shared/db/client';
import { QUIET_BEFORE_RECOUNT_MS, recountMarkedBlock, settleOrderNumbers } from '#shared/db/entities/count-repair';
import { logger } from '#shared/logger';
import { relayOwedNotification } from '#shared/mail/relay';
import { sqsBatchHandler } from '#shared/queue/batch-handler';
import { type FollowUp, parseFollowUp, sendFollowUps } from '#shared/queue/follow-ups';

/** How long a block must have been quiet before it is recounted (tests on an emulator without index lag set less). */
const RECOUNT_QUIET_SECONDS = Number(process.env.RECOUNT_QUIET_SECONDS ?? QUIET_BEFORE_RECOUNT_MS / 1000);

/** A follow-up whose work cannot be done now: SQS redelivers it (and parks it after 5 receives). */
class NotDoneYet extends Error {
  override name = 'NotDoneYet';
}

/** One follow-up, if its work is still owed (docs/architecture.md#the-change-feed, "Owed work"); its outcome, for the log. */
const followUp = async (work: FollowUp): Promise<string> => {
  if (work.kind === 'settle') return `${await settleOrderNumbers(functionTable, work.key, work.first, work.last)} unused numbers noted`;
  if (work.kind === 'recount') {
    const recount = await recountMarkedBlock(functionTable, work.key, { quietMs: RECOUNT_QUIET_SECONDS * 1000 });
    if (!recount) throw new NotDoneYet('the block kept changing under its recount');
    if (recount === 'marked') return 'changed a moment ago: marked to be recounted later';
    if (recount === 'derived') return 'still taking numbers: its count is derived from the sequence';
    return `recounted ${recount.before} -> ${recount.after}`;
  }
  const outcome = await relayOwedNotification(work.key, work.due);
  if (outcome === 'skipped') throw new NotDoneYet('the owed e-mail could not be read');
  if (outcome === 'early' && Date.parse(work.due) > Date.now()) {
    const [sent] = await sendFollowUps([work], 0);
    if (!sent) throw new NotDoneYet('the follow-up of an e-mail due later could not be scheduled again');
  }
  return outcome;
};

const processRecord = async (record: SQSRecord) => {
  const work = parseFollowUp(record.body);
  // Not a follow-up: nothing can ever do it; logged, acknowledged.
  if (!work) return logger.error('Not a follow-up message: dropped', { message_id: record.messageId });
  const outcome = await followUp(work);
  logger.info('Follow-up done', { kind: work.kind, sk: work.key.sk, outcome });
};

/** The follow-ups worker: each is done on its own; one that fails comes back, after 5 receives parked (lib/README.md). */
export const handler = sqsBatchHandler(processRecord, (record, error) => {
  logger.warn('Follow-up not done; SQS will redeliver it', {
    message_id: record.messageId,
    receive_count: record.attributes?.ApproximateReceiveCount,
    error: { name: error.name, message: error.message },
  });
  return false;
});
