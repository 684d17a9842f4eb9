import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { type Reactions, reactionsTo } from '#shared/changes/feed';
import { functionTable } from '#shared/db/client';
import { refreshGroupTotals } from '#shared/db/entities/counter';
import { upsertCustomer } from '#shared/db/entities/customer';
import { asError, errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { requireQueueUrl } from '#shared/queue/client';
import { sendToDeadLetterQueue } from '#shared/queue/dead-letter';
import { type FollowUp, sendFollowUps } from '#shared/queue/follow-ups';
import { sendOrderEvents } from '#shared/queue/orders';
import { sendLists } from '#shared/queue/send-batch';
import { sendDeliveries } from '#shared/queue/webhooks';
import { fanOutWebhookEvents } from '#shared/webhooks/fan-out';

const FUNCTION_ID = 'change-feed';
const PARKED_QUEUE_URL = requireQueueUrl('parked');
const FOLLOW_UP_MIN_DELAY_SECONDS = Number(process.env.FOLLOW_UP_MIN_DELAY_SECONDS ?? '60');

type Planned = { record: DynamoDBRecord; reactions: Reactions } | { record: DynamoDBRecord; poison: Error };

/** Carries out one kind of reaction for the records that have it; returns the indexes (into `planned`) that failed. */
const carryOut = async <T>(
  planned: readonly Planned[],
  pick: (reactions: Reactions) => T | undefined,
  send: (items: T[]) => Promise<boolean[]>,
): Promise<number[]> => {
  const wanted = planned.flatMap((entry, index) => {
    const item = 'reactions' in entry ? pick(entry.reactions) : undefined;
    return item === undefined ? [] : [{ index, item }];
  });
  if (wanted.length === 0) return [];
  const done = await send(wanted.map(({ item }) => item));
  return wanted.filter((_, position) => !done[position]).map(({ index }) => index);
};

/** A record that cannot be read goes to the parked queue with its reason (alarmed), and the feed moves on. */
const park = async (entries: { record: DynamoDBRecord; error: Error }[]): Promise<boolean[]> =>
  Promise.all(
    entries.map(async ({ record, error }) => {
      try {
        await sendToDeadLetterQueue(
          PARKED_QUEUE_URL,
          { body: JSON.stringify(record), id: record.eventID ?? record.dynamodb?.SequenceNumber ?? '' },
          { error: error.name, message: error.message, source: FUNCTION_ID },
        );
        logger.error('Change record cannot be read: parked', {
          event_id: record.eventID,
          error: { name: error.name, message: error.message },
        });
        return true;
      } catch (parkError) {
        logger.error('Change record cannot be read, and the parked queue refused it; the stream will retry', {
          event_id: record.eventID,
          error_name: errorName(parkError),
        });
        return false;
      }
    }),
  );

/** Sends every record's follow-ups in one go; a record's are done when SQS took all of them. */
const sendFollowUpLists = (lists: FollowUp[][]): Promise<boolean[]> =>
  sendLists(lists, (followUps) => sendFollowUps(followUps, FOLLOW_UP_MIN_DELAY_SECONDS));

const upsertCustomers = (customers: NonNullable<Reactions['customer']>[]): Promise<boolean[]> =>
  Promise.all(
    customers.map(({ merchantId, customer, at }) =>
      upsertCustomer(functionTable, merchantId, customer, at).then(
        () => true,
        (error: unknown) => {
          logger.warn('Customer upsert failed; the stream will retry it', { error_name: errorName(error) });
          return false;
        },
      ),
    ),
  );

/** Refreshes the group totals of the changed blocks, once per merchant and group; a merchant's refresh that fails fails all its blocks. */
const refreshGroups = async (changed: NonNullable<Reactions['countBlock']>[]): Promise<boolean[]> => {
  const byMerchant = new Map<string, NonNullable<Reactions['countBlock']>['block'][]>();
  for (const { merchantId, block } of changed) byMerchant.set(merchantId, [...(byMerchant.get(merchantId) ?? []), block]);
  const failed = new Set<string>();
  await Promise.all(
    [...byMerchant].map(([merchantId, blocks]) =>
      refreshGroupTotals(functionTable, merchantId, blocks).catch((error: unknown) => {
        logger.warn('Group totals not refreshed; the stream will retry', { merchant_id: merchantId, error_name: errorName(error) });
        failed.add(merchantId);
      }),
    ),
  );
  return changed.map(({ merchantId }) => !failed.has(merchantId));
};

/**
 * The change feed (shared/changes/feed.ts), on the table's stream: a DynamoDB event source
 * mapping with ReportBatchItemFailures in AWS, local/stream-poller.ts in `npm start`.
 *
 * A batch's reactions are carried out together (queue sends in batches of 10, upserts in
 * parallel, one group-total refresh per merchant and group); if any failed, the first record with a failed reaction is reported, so the mapping
 * reads the batch again from there: records before it are done, the rest are redone, which every
 * reaction allows (idempotent). Nothing is lost while a queue refuses: the stream keeps a record
 * 24 hours, and the mapping retries (bisecting) until then; the IteratorAge alarm says the feed is
 * behind. A record that cannot be read at all is parked with its reason instead of blocking the feed.
 */
export const handler = middy<DynamoDBStreamEvent, DynamoDBBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async (event) => {
    const planned: Planned[] = event.Records.map((record) => {
      try {
        return { record, reactions: reactionsTo(record) };
      } catch (error) {
        return { record, poison: asError(error) };
      }
    });
    const poisoned = planned.flatMap((entry, index) => ('poison' in entry ? [{ index, record: entry.record, error: entry.poison }] : []));
    const parked = await park(poisoned);
    const failed = [
      ...poisoned.filter((_, position) => !parked[position]).map(({ index }) => index),
      ...(
        await Promise.all([
          carryOut(planned, (reactions) => reactions.orderEvent, sendOrderEvents),
          carryOut(planned, (reactions) => reactions.followUps, sendFollowUpLists),
          carryOut(planned, (reactions) => reactions.customer, upsertCustomers),
          carryOut(planned, (reactions) => reactions.countBlock, refreshGroups),
          carryOut(
            planned,
            (reactions) => reactions.webhookEvents,
            (records) => fanOutWebhookEvents(functionTable, records, sendDeliveries),
          ),
        ])
      ).flat(),
    ];
    if (failed.length === 0) return { batchItemFailures: [] };
    const first = planned[Math.min(...failed)]?.record;
    logger.warn('Change feed: some reactions failed; the batch is read again from the first of them', {
      records: event.Records.length,
      failed: failed.length,
      from_sequence_number: first?.dynamodb?.SequenceNumber,
    });
    return { batchItemFailures: [{ itemIdentifier: first?.dynamodb?.SequenceNumber ?? '' }] };
  });
