import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { merchantOfRecord, type Reactions, reactionsTo } from '#shared/changes/feed';
import { createFailureTracker, parkPolicyFromEnv } from '#shared/changes/retries';
import { functionTable } from '#shared/db/client';
import { merchantIdOf } from '#shared/db/entities/base';
import { applyLedgerWrites, paddedSequence } from '#shared/db/entities/commission-totals';
import { unnamedOrderNumbers } from '#shared/db/entities/count-repair';
import { blocksOfClosedGroups, refreshGroupTotals } from '#shared/db/entities/counter';
import { lookUpOrCreateCustomer } from '#shared/db/entities/customer';
import { appendToEventLog } from '#shared/db/entities/event-log';
import { withRepeatableRetry } from '#shared/db/retry';
import { asError, errorName } from '#shared/errors';
import { groupBy } from '#shared/group-by';
import { logger } from '#shared/logger';
import { emitMetrics, METRIC } from '#shared/metrics';
import { requireQueueUrl } from '#shared/queue/client';
import { sendToDeadLetterQueue } from '#shared/queue/dead-letter';
import { type FollowUp, sendFollowUps } from '#shared/queue/follow-ups';
import { inlineOrReference } from '#shared/queue/large-bodies';
import { sendOrderEvents } from '#shared/queue/orders';
import { encodeMessage, sendLists } from '#shared/queue/send-batch';
import { sendDeliveries } from '#shared/queue/webhooks';
import { fanOutWebhookEvents } from '#shared/webhooks/fan-out';

const FUNCTION_ID = 'change-feed';
const PARKED_QUEUE_URL = requireQueueUrl('parked');
const FOLLOW_UP_MIN_DELAY_SECONDS = Number(process.env.FOLLOW_UP_MIN_DELAY_SECONDS ?? '60');
const ORDER_NUMBER_SETTLE_SECONDS =
  process.env.ORDER_NUMBER_SETTLE_SECONDS === undefined ? undefined : Number(process.env.ORDER_NUMBER_SETTLE_SECONDS);
const failures = createFailureTracker(parkPolicyFromEnv());

type Planned = { record: DynamoDBRecord; reactions: Reactions } | { record: DynamoDBRecord; poison: Error };

/** The share of the time left the reactions may take: a batch that times out loses the failure counts, so nothing would be parked. */
const REACTIONS_SHARE = 2 / 3;
/** The share of the time left by which the parking gives up, leaving time to answer. */
const PARKING_SHARE = 0.93;

/** `work`'s answer, or `late` once the clock passes `deadline` (work left running is idempotent, and redone when read again). */
const byDeadline = async <T>(work: Promise<T>, deadline: number, late: () => T): Promise<T> => {
  if (!Number.isFinite(deadline)) return work;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late()), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
};

const recordId = (record: DynamoDBRecord) => record.eventID ?? record.dynamodb?.SequenceNumber ?? '';

/** Parks records on the parked queue with their content and why; for each, whether the queue took it by `deadline`. */
const park = async (entries: { record: DynamoDBRecord; error: Error }[], deadline: number): Promise<boolean[]> =>
  byDeadline(
    Promise.all(
      entries.map(async ({ record, error }) => {
        try {
          const body = await inlineOrReference(functionTable, { body: encodeMessage(record), merchantId: merchantOfRecord(record) });
          await sendToDeadLetterQueue(PARKED_QUEUE_URL, { body, id: recordId(record) }, error, FUNCTION_ID);
          logger.error('Change record parked', { event_id: record.eventID, error: { name: error.name, message: error.message } });
          return true;
        } catch (parkError) {
          logger.error('Change record not parked: the parked queue refused it; the stream will retry', {
            event_id: record.eventID,
            error_name: errorName(parkError),
          });
          return false;
        }
      }),
    ),
    deadline,
    () => entries.map(() => false),
  );

/** Whether a follow-up is still owed: a `settle` is not once the list index names an order for each of its numbers (one Query). */
const stillOwed = async (followUp: FollowUp): Promise<boolean> => {
  if (followUp.kind !== 'settle') return true;
  try {
    return (await unnamedOrderNumbers(functionTable, merchantIdOf(followUp.key.pk), followUp.first, followUp.last)).length > 0;
  } catch {
    return true;
  }
};

/** Sends every record's follow-ups that are still owed in one go; a record's are done when SQS took all of them. */
const sendFollowUpLists = async (lists: FollowUp[][]): Promise<boolean[]> => {
  const owed = await Promise.all(
    lists.map(async (followUps) => {
      const keep = await Promise.all(followUps.map(stillOwed));
      return followUps.filter((_, index) => keep[index]);
    }),
  );
  return sendLists(owed, (followUps) => sendFollowUps(followUps, FOLLOW_UP_MIN_DELAY_SECONDS));
};

/** Looks up or creates each customer the batch's new orders name, once per customer. */
const upsertCustomers = async (customers: NonNullable<Reactions['customer']>[]): Promise<boolean[]> => {
  const keyOf = ({ merchantId, customer }: (typeof customers)[number]) => `${merchantId}\u0000${customer.email.toLowerCase()}`;
  const done = new Map<string, Promise<boolean>>();
  for (const entry of customers)
    if (!done.has(keyOf(entry)))
      done.set(
        keyOf(entry),
        withRepeatableRetry(() => lookUpOrCreateCustomer(functionTable, entry.merchantId, entry.customer, entry.at)).then(
          () => true,
          (error: unknown) => {
            logger.warn('Customer upsert failed; the stream will retry it', { error_name: errorName(error) });
            return false;
          },
        ),
      );
  return Promise.all(customers.map((entry) => done.get(keyOf(entry)) as Promise<boolean>));
};

/** Runs `apply` once per merchant with its items of the batch, merchants in parallel; an item is done when its merchant's run was. */
const perMerchant = async <T extends { merchantId: string }>(
  items: readonly T[],
  what: string,
  apply: (merchantId: string, own: T[]) => Promise<unknown>,
): Promise<boolean[]> => {
  const failed = new Set<string>();
  await Promise.all(
    [...groupBy(items, (item) => item.merchantId)].map(([merchantId, own]) =>
      withRepeatableRetry(() => apply(merchantId, own)).catch((error: unknown) => {
        logger.warn(`${what}; the stream will retry`, { merchant_id: merchantId, error_name: errorName(error) });
        failed.add(merchantId);
      }),
    ),
  );
  return items.map(({ merchantId }) => !failed.has(merchantId));
};

type Reaction = { [K in keyof Reactions]-?: NonNullable<Reactions[K]> };

/** How a batch carries out each kind of reaction, in this order: for each record's item, whether it was done. */
const REACTORS: { [K in keyof Reaction]: (items: Reaction[K][]) => Promise<boolean[]> } = {
  orderEvent: sendOrderEvents,
  followUps: sendFollowUpLists,
  customer: upsertCustomers,
  // The group totals of the changed blocks that a page can read, once per merchant and group.
  countBlock: (changed) =>
    perMerchant(changed, 'Group totals not refreshed', async (merchantId, own) => {
      const blocks = own.map(({ block }) => block);
      return refreshGroupTotals(functionTable, merchantId, await blocksOfClosedGroups(functionTable, merchantId, blocks));
    }),
  webhookEvents: (records) => fanOutWebhookEvents(functionTable, records, (messages) => sendDeliveries(functionTable, messages)),
  // A merchant's ledger writes in one go (what a record read again had applied is skipped).
  reportTotals: (writes) =>
    perMerchant(writes, 'Report totals not applied', (merchantId, own) => {
      const ledgerWrites = own.map(({ sequence, deltas, at }) => ({ seq: paddedSequence(sequence), deltas, at }));
      return applyLedgerWrites(functionTable, merchantId, ledgerWrites);
    }),
  // Each merchant's log commits its own head.
  eventLog: (logs) =>
    perMerchant(logs, 'Events not logged', (merchantId, own) => {
      const entries = own.flatMap((log) => log.entries);
      return appendToEventLog(functionTable, merchantId, entries);
    }),
};

/** Carries out one kind of reaction for the records that have it; returns the indexes that failed or were late. */
const carryOut = async <K extends keyof Reactions>(planned: readonly Planned[], deadline: number, kind: K): Promise<number[]> => {
  const wanted = planned.flatMap((entry, index) => {
    const item = 'reactions' in entry ? entry.reactions[kind] : undefined;
    return item === undefined ? [] : [{ index, item: item as Reaction[K] }];
  });
  if (wanted.length === 0) return [];
  const done = await byDeadline(REACTORS[kind](wanted.map(({ item }) => item)), deadline, () => wanted.map(() => false));
  return wanted.filter((_, position) => !done[position]).map(({ index }) => index);
};

const carryOutAll = async (planned: readonly Planned[], deadline: number): Promise<Map<number, string[]>> => {
  const running = (Object.keys(REACTORS) as (keyof Reactions)[]).map((kind) => [kind, carryOut(planned, deadline, kind)] as const);
  const failed = new Map<number, string[]>();
  for (const [kind, indexes] of running) {
    for (const index of await indexes) failed.set(index, [...(failed.get(index) ?? []), kind]);
  }
  return failed;
};

/** What a record read again has carried out when it was parked: nothing is left to do. */
const PARKED = 'parked';

/** The reactions of a record less those it carried out when it was read before. */
const withoutCarried = (reactions: Reactions, carried: ReadonlySet<string>): Reactions =>
  carried.size === 0 ? reactions : (Object.fromEntries(Object.entries(reactions).filter(([kind]) => !carried.has(kind))) as Reactions);

/** A record whose reactions kept failing, as the reason it is parked for. */
class ReactionsKeptFailing extends Error {
  override name = 'ReactionsKeptFailing';
}

/** Counts each failed record's failure; returns those to park now, by policy or by merchant (docs/architecture.md#the-change-feed). */
const overdueRecords = (planned: readonly Planned[], failed: ReadonlyMap<number, string[]>, now: number) => {
  const merchants = planned.map(({ record }) => merchantOfRecord(record));
  const failing = new Set([...failed.keys()].map((index) => merchants[index]));
  const wentThrough = planned.map((entry, index) => 'reactions' in entry && Object.keys(entry.reactions).length > 0 && !failed.has(index));
  wentThrough.forEach((through, index) => {
    const merchantId = merchants[index];
    if (through && merchantId !== undefined && !failing.has(merchantId)) failures.merchantWentThrough(merchantId);
  });
  const kept = new Map(
    [...failed.keys()].map((index) => [index, failures.failed(recordId(planned[index]?.record as DynamoDBRecord), now)]),
  );
  const atOnce = new Set<number>();
  for (const index of [...failed.keys()].sort((a, b) => a - b)) {
    if (kept.get(index)) continue;
    const merchantId = merchants[index];
    const othersBehind = wentThrough.some((through, at) => through && at > index && merchants[at] !== merchantId);
    if (merchantId === undefined || !othersBehind || !failures.merchantFailing(merchantId, now)) break;
    atOnce.add(index);
  }
  return [...failed].flatMap(([index, kinds]) => {
    if (!kept.get(index) && !atOnce.has(index)) return [];
    const { record } = planned[index] as Planned;
    const error = new ReactionsKeptFailing(
      kept.get(index)
        ? `Its reactions kept failing (${kinds.join(', ')}) over ${failures.tries(recordId(record))} tries`
        : `Its reactions failed (${kinds.join(', ')}) while its merchant's kept failing`,
    );
    return [{ index, record, error }];
  });
};

/** Counts the new orders whose announcement went out in this read, in one EMF line: where an order is accepted, batched. */
const countAcceptedOrders = (planned: readonly Planned[], carried: readonly string[][]) => {
  const accepted = planned.filter(
    (entry, index) => 'reactions' in entry && entry.reactions.orderEvent?.version === 1 && carried[index]?.includes('orderEvent'),
  ).length;
  if (accepted > 0) emitMetrics({ [METRIC.ordersAccepted]: accepted });
};

/** Carries out a batch's reactions (`parked replay` too); returns the sequence number to read again from, undefined when all are done. */
export const processChangeRecords = async (
  records: readonly DynamoDBRecord[],
  now = Date.now(),
  timeLeftMs = Number.POSITIVE_INFINITY,
): Promise<string | undefined> => {
  const started = Date.now();
  const planned: Planned[] = records.map((record) => {
    const carried = failures.carried(recordId(record));
    if (carried.has(PARKED)) return { record, reactions: {} };
    try {
      return { record, reactions: withoutCarried(reactionsTo(record, ORDER_NUMBER_SETTLE_SECONDS), carried) };
    } catch (error) {
      return { record, poison: asError(error) };
    }
  });
  const failed = await carryOutAll(planned, started + timeLeftMs * REACTIONS_SHARE);
  // What each record carried out in this read: its reactions that did not fail (or its parking, below).
  const carried = planned.map((entry, index) =>
    'reactions' in entry ? Object.keys(entry.reactions).filter((kind) => !failed.get(index)?.includes(kind)) : [],
  );
  countAcceptedOrders(planned, carried);
  const unreadable = planned.flatMap((entry, index) => ('poison' in entry ? [{ index, record: entry.record, error: entry.poison }] : []));
  const overdue = overdueRecords(planned, failed, now);
  const toPark = [...unreadable, ...overdue];
  const parked = await park(toPark, started + timeLeftMs * PARKING_SHARE);
  toPark.forEach(({ index, record, error }, position) => {
    if (parked[position]) {
      failed.delete(index);
      carried[index] = [PARKED];
      const merchantId = merchantOfRecord(record);
      if (error instanceof ReactionsKeptFailing && merchantId !== undefined) failures.merchantParked(merchantId, now);
    } else failed.set(index, [...(failed.get(index) ?? []), 'park']);
  });
  // The records before the first failure are done; the rest are read again, skipping what they carried out.
  const from = failed.size === 0 ? records.length : Math.min(...failed.keys());
  records.forEach((record, index) => {
    if (index < from) failures.done(recordId(record));
    else failures.carriedOut(recordId(record), carried[index] ?? []);
  });
  if (failed.size === 0) return undefined;
  const first = records[from];
  logger.warn('Change feed: some reactions failed; the batch is read again from the first of them', {
    records: records.length,
    failed: failed.size,
    from_sequence_number: first?.dynamodb?.SequenceNumber,
  });
  return first?.dynamodb?.SequenceNumber ?? '';
};

/** The change feed on the table's stream (ReportBatchItemFailures): a batch's reactions are carried out together. */
export const handler = middy<DynamoDBStreamEvent, DynamoDBBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event, context) => {
    const from = await processChangeRecords(event.Records, Date.now(), context.getRemainingTimeInMillis());
    return { batchItemFailures: from === undefined ? [] : [{ itemIdentifier: from }] };
  });
