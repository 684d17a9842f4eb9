import { randomUUID } from 'node:crypto';
import { parseAffiliateRequest } from '#shared/db/entities/affiliate-request';
import { type CommissionLedger, type LedgerEntry, parseCommissionLedgerImage } from '#shared/db/entities/commission';
import { parseInvite } from '#shared/db/entities/invite';
import { ORDER_EVENT_TYPES, type OrderEventMessage } from '#shared/domain/order-events';
import { toAffiliateRequestResponse, toInviteResponse } from '#shared/domain/program-model';
import { isoNow } from '#shared/time';

/** The events an endpoint can subscribe to, each derived from a write; its `id` comes from the change: a record read twice, one event. */
export const WEBHOOK_EVENT_TYPES = [
  ...ORDER_EVENT_TYPES,
  'commission.accrued',
  'commission.reversed',
  'affiliate_request.created',
  'affiliate_request.accepted',
  'affiliate_request.declined',
  'invite.sent',
  'invite.accepted',
] as const;
export type SubscribableEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent only by `POST /api/v2/webhooks/{uuid}/test`, to that endpoint, whatever its filter. */
export const TEST_EVENT_TYPE = 'webhook.test';
export type WebhookEventType = SubscribableEventType | typeof TEST_EVENT_TYPE;

export type WebhookEvent = { id: string; type: WebhookEventType; timestamp: string; data: Record<string, unknown> };

/** Whether an endpoint with this filter (empty: every type) gets events of `type`; a test reaches it whatever its filter. */
export const subscribes = (endpoint: { events: readonly string[] }, type: string) =>
  type === TEST_EVENT_TYPE || endpoint.events.length === 0 || endpoint.events.includes(type);

/** What a receiver gets as the body: the event without its id (the id travels in `webhook-id`). */
export const eventBody = (event: WebhookEvent): string =>
  JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });

export const orderWebhookEvent = ({ id, type, timestamp, data }: OrderEventMessage): WebhookEvent => ({ id, type, timestamp, data });

/** A commission ledger entry as webhooks show it (no API resource has commissions; this is its shape). */
export const toCommissionEventData = (ledger: CommissionLedger, entry: LedgerEntry) => ({
  commission: {
    order_uuid: ledger.order_uuid,
    order_no: ledger.order_no,
    affiliate_slug: ledger.affiliate_slug,
    tier_slug: ledger.tier_slug,
    currency_code: ledger.currency_code,
    amount: entry.amount,
    net_amount: ledger.net_amount,
    order_version: entry.version,
    booked_at: entry.at,
  },
});

const COMMISSION_EVENTS: Partial<Record<LedgerEntry['type'], SubscribableEventType>> = {
  accrual: 'commission.accrued',
  reversal: 'commission.reversed',
};

type Image = Record<string, unknown>;

const commissionEvents = (before: Image | undefined, after: Image): WebhookEvent[] => {
  const ledger = parseCommissionLedgerImage(after);
  const known = before === undefined ? 0 : parseCommissionLedgerImage(before).entries.length;
  return ledger.entries.slice(known).flatMap((entry) => {
    const type = COMMISSION_EVENTS[entry.type];
    const id = `evt_commission_${ledger.order_uuid}_${entry.type}_v${entry.version}`;
    return type === undefined ? [] : [{ id, type, timestamp: entry.at, data: toCommissionEventData(ledger, entry) }];
  });
};

const requestEvents = (before: Image | undefined, after: Image): WebhookEvent[] => {
  const request = parseAffiliateRequest(after);
  const data = { affiliate_request: toAffiliateRequestResponse(request) };
  if (before === undefined) {
    return [{ id: `evt_areq_${request.uuid}_created`, type: 'affiliate_request.created', timestamp: request.requested_at, data }];
  }
  const previous = parseAffiliateRequest(before);
  if (previous.status !== 'pending' || request.status === 'pending') return [];
  const type = request.status === 'accepted' ? 'affiliate_request.accepted' : 'affiliate_request.declined';
  return [{ id: `evt_areq_${request.uuid}_${request.status}`, type, timestamp: request.decided_at ?? request.updated_at, data }];
};

const inviteEvents = (before: Image | undefined, after: Image): WebhookEvent[] => {
  const invite = parseInvite(after);
  const previous = before === undefined ? undefined : parseInvite(before);
  const data = { invite: toInviteResponse(invite) };
  const events: WebhookEvent[] = [];
  if (invite.notified_at !== undefined && previous?.notified_at === undefined) {
    events.push({ id: `evt_invite_${invite.uuid}_sent`, type: 'invite.sent', timestamp: invite.notified_at, data });
  }
  if (invite.link_used_at && !previous?.link_used_at) {
    events.push({ id: `evt_invite_${invite.uuid}_accepted`, type: 'invite.accepted', timestamp: invite.link_used_at, data });
  }
  return events;
};

const DERIVERS: Record<string, (before: Image | undefined, after: Image) => WebhookEvent[]> = {
  commission: commissionEvents,
  affiliate_request: requestEvents,
  invite: inviteEvents,
};

/** The webhook events of one write of a commission ledger, an affiliate request or an invite (a shipping adjustment has none). */
export const itemWebhookEvents = (before: Image | undefined, after: Image): WebhookEvent[] => {
  const derive = typeof after.type === 'string' ? DERIVERS[after.type] : undefined;
  return derive ? derive(before, after) : [];
};

/** The `webhook.test` event: a fresh id each time, so each test is its own delivery. */
export const testWebhookEvent = (endpointUuid: string, now = isoNow()): WebhookEvent => ({
  id: `evt_test_${randomUUID()}`,
  type: TEST_EVENT_TYPE,
  timestamp: now,
  data: { webhook: { uuid: endpointUuid }, message: 'This is a test event from the Affiliate Program Merchant API.' },
});
