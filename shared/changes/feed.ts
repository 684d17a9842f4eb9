import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { type Key, merchantIdOf } from '#shared/db/entities/base';
import { parseCommissionLedgerImage } from '#shared/db/entities/commission';
import type { TotalsDelta } from '#shared/db/entities/commission-totals';
import {
  type BlockRef,
  closedOrderBlocks,
  closedOrderGroup,
  ORDER_NUMBER_SETTLE_SECONDS,
  parseBlockCountSk,
  takenOrderNumbers,
} from '#shared/db/entities/counter';
import { eventPosition, type LogEntry } from '#shared/db/entities/event-log';
import { isOrderItem, parseOrder } from '#shared/db/entities/order';
import { workDueOf, workKindOf } from '#shared/db/entities/owed-work';
import { SEQUENCE_TAKEN } from '#shared/db/entities/quota';
import { type OrderEventMessage, orderEventMessage, versionOf } from '#shared/domain/order-events';
import { ledgerTotalsDeltas } from '#shared/domain/reports';
import type { FollowUp } from '#shared/queue/follow-ups';
import { itemWebhookEvents, orderWebhookEvent } from '#shared/webhooks/events';
import type { MerchantEvents } from '#shared/webhooks/fan-out';

/** What the service does in reaction to one write; each is idempotent, the stream being read at least once (docs/architecture.md). */
export type Reactions = {
  orderEvent?: OrderEventMessage;
  customer?: { merchantId: string; customer: { name: string | null; email: string }; at: string };
  followUps?: FollowUp[];
  countBlock?: { merchantId: string; block: BlockRef };
  webhookEvents?: MerchantEvents;
  reportTotals?: { merchantId: string; sequence: string; at: string; deltas: TotalsDelta[] };
  eventLog?: { merchantId: string; entries: LogEntry[] };
};

/** The item types whose writes can have a reaction (a test holds this to `reactionsTo`). */
const REACTING_ITEM_TYPES = ['order', 'affiliate_request', 'invite', 'commission', 'list_count', 'counter'] as const;

/** The event source's filter patterns (any one passes): inserts and modifications of those items, and quota writes that took numbers. */
const REACTING_ITEMS = { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { type: { S: REACTING_ITEM_TYPES } } } };
const ORDER_SEQUENCE_TAKEN = { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { [SEQUENCE_TAKEN]: { BOOL: [true] } } } };
export const CHANGE_FEED_FILTERS = [REACTING_ITEMS, ORDER_SEQUENCE_TAKEN] as const;

type Image = Record<string, unknown>;

/** Lambda's stream images are DynamoDB JSON, the same wire format the SDK unmarshalls. */
const imageOf = (image: unknown): Image | undefined =>
  image === undefined ? undefined : unmarshall(image as Record<string, AttributeValue>, { wrapNumbers: false });

/** The merchant whose item a stream record is about, if its key says. */
export const merchantOfRecord = (record: DynamoDBRecord | undefined): string | undefined => {
  const pk = record?.dynamodb?.Keys?.pk?.S;
  return pk?.startsWith('M#') ? merchantIdOf(pk) : undefined;
};

const keyOf = (item: Image): Key => ({ pk: String(item.pk), sk: String(item.sk) });

const orderReactions = (before: Image | undefined, after: Image): Reactions => {
  const order = parseOrder(after);
  const merchantId = merchantIdOf(keyOf(after).pk);
  const created = before === undefined;
  if (created && order.history) return {};
  const reactions: Reactions = {};
  if (created || versionOf(order) > versionOf(parseOrder(before))) {
    reactions.orderEvent = orderEventMessage(merchantId, order);
    reactions.webhookEvents = { merchantId, events: [orderWebhookEvent(reactions.orderEvent)] };
  }
  if (created && order.customer) reactions.customer = { merchantId, customer: order.customer, at: order.created_at };
  return reactions;
};

/** The webhook events of a write of any other item (none for most). */
const itemReactions = (before: Image | undefined, after: Image): Reactions => {
  const events = itemWebhookEvents(before, after);
  return events.length === 0 ? {} : { webhookEvents: { merchantId: merchantIdOf(keyOf(after).pk), events } };
};

const followUpOf = (before: Image | undefined, after: Image): FollowUp | undefined => {
  const kind = workKindOf(after);
  const due = workDueOf(after);
  if (due === undefined) return undefined;
  if (kind === 'NOTIFY') {
    const moved = before === undefined || workKindOf(before) !== 'NOTIFY' || workDueOf(before) !== due;
    return moved ? { kind: 'notify', key: keyOf(after), due } : undefined;
  }
  if (kind === 'RECOUNT' && typeof after.marked_at === 'string' && after.marked_at !== before?.marked_at) {
    return { kind: 'recount', key: keyOf(after), due: after.marked_at };
  }
  return undefined;
};

/** A block count whose version moved (a group total item has its own type and is never one), else a group a write closed. */
const countBlockOf = (before: Image | undefined, after: Image): Reactions['countBlock'] => {
  const { pk, sk } = keyOf(after);
  const block = after.type === 'list_count' && after.v !== before?.v ? parseBlockCountSk(sk) : closedOrderGroup(before, after);
  return block === undefined ? undefined : { merchantId: merchantIdOf(pk), block };
};

/** A write of a commission ledger: its contribution to the report totals, with the record's place in the stream. */
const reportTotalsOf = (record: DynamoDBRecord, before: Image | undefined, after: Image, at: string): Reactions['reportTotals'] => {
  if (after.type !== 'commission') return undefined;
  const sequence = record.dynamodb?.SequenceNumber;
  if (sequence === undefined) throw new Error('A commission ledger record without a sequence number');
  // The write's own time (its entries') when later than the stream's, which is rounded down (to the minute locally).
  const written = parseCommissionLedgerImage(after).updated_at;
  return {
    merchantId: merchantIdOf(keyOf(after).pk),
    sequence,
    at: written > at ? written : at,
    deltas: ledgerTotalsDeltas(before, after),
  };
};

/** The log entries of a record's webhook events: positions from its sequence number, time from its write. */
const eventLogOf = (record: DynamoDBRecord, events: MerchantEvents | undefined): Reactions['eventLog'] => {
  const sequenceNumber = record.dynamodb?.SequenceNumber;
  if (events === undefined || events.events.length === 0 || sequenceNumber === undefined) return undefined;
  const loggedAt = Math.floor(record.dynamodb?.ApproximateCreationDateTime ?? Date.now() / 1000);
  const entries = events.events.map((event, index) => ({ position: eventPosition(sequenceNumber, index), event, loggedAt }));
  return { merchantId: events.merchantId, entries };
};

/** What the service does about one stream record (`settleSeconds`: order numbers settle that long after their take); throws on poison. */
export const reactionsTo = (record: DynamoDBRecord, settleSeconds = ORDER_NUMBER_SETTLE_SECONDS): Reactions => {
  const after = imageOf(record.dynamodb?.NewImage);
  if (record.eventName === 'REMOVE' || after === undefined) return {};
  const before = imageOf(record.dynamodb?.OldImage);
  const reactions: Reactions = isOrderItem(after) ? orderReactions(before, after) : itemReactions(before, after);
  const owed = followUpOf(before, after);
  // A closed block is due when the counter moved past it; the follow-up's delay does the waiting.
  const movedAt = new Date((record.dynamodb?.ApproximateCreationDateTime ?? Date.now() / 1000) * 1000).toISOString();
  const closed = closedOrderBlocks(before, after).map((key): FollowUp => ({ kind: 'recount', key, due: movedAt }));
  const settledAt = new Date(Date.parse(movedAt) + settleSeconds * 1000).toISOString();
  const taken = takenOrderNumbers(before, after).map((numbers): FollowUp => ({ kind: 'settle', ...numbers, due: settledAt }));
  const followUps = [...(owed ? [owed] : []), ...closed, ...taken];
  const countBlock = countBlockOf(before, after);
  const reportTotals = reportTotalsOf(record, before, after, movedAt);
  const eventLog = eventLogOf(record, reactions.webhookEvents);
  return {
    ...reactions,
    ...(followUps.length > 0 ? { followUps } : {}),
    ...(countBlock ? { countBlock } : {}),
    ...(reportTotals ? { reportTotals } : {}),
    ...(eventLog ? { eventLog } : {}),
  };
};
