import * as z from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import { type RouteId, route } from '#functions/routes';
import { pascalCase } from '#lib/function-specs';
import { DEMO, DEMO_DELIVERY_EVENT_ID } from '#local/demo';
import { eventPosition, LOG_START } from '#shared/db/entities/event-log';
import { buildOrder } from '#shared/db/entities/order';
import { RETENTION_DAYS as DELIVERY_RETENTION_DAYS } from '#shared/db/entities/webhook-delivery';
import { encodeCursor as encodeEventCursor } from '#shared/domain/event-cursor';
import { ORDER_MESSAGES, toOrderResponse } from '#shared/domain/order-model';
import { type FieldErrors, INVITE_MESSAGES, REQUEST_MESSAGES } from '#shared/errors';
import type { Meta } from '#shared/http/envelope';
import { DEFAULT_PER_PAGE, encodeCursor, invitePagination as invitePaginationOf, laravelPagination } from '#shared/http/pagination';
import { EVENTS_MESSAGES, EVENTS_RETENTION_DAYS, MAX_EXAMINED_PER_PAGE_VALUE } from '#shared/schemas/events';
import { orderCreateBody, orderUpdateBody } from '#shared/schemas/order';
import { inviteCreateBody } from '#shared/schemas/program';
import { MAX_REPORT_DAYS } from '#shared/schemas/reports';
import * as R from '#shared/schemas/responses';
import {
  MAX_WEBHOOK_ENDPOINTS,
  RECOVER_MAX_DAYS,
  WEBHOOK_MESSAGES,
  webhookCreateBody,
  webhookRecoverBody,
  webhookUpdateBody,
} from '#shared/schemas/webhooks';
import { laravelErrors } from '#shared/validation/messages';
import { RECOVER_BATCH } from '#shared/webhooks/replay';
import { ROUTE_SAMPLES, SAMPLES } from './event-samples';

/** The examples of openapi.json and each operation's text, naming the demo merchant's resources so "Try it out" works locally. */

export const EXAMPLE_TRACE_ID = '2026-11-23T10:15:30Z:api:3f9a2c1b';
/** A trace id as API Gateway writes it in its own answers (lib/rest-api.ts). */
export const EXAMPLE_GATEWAY_TRACE_ID = '23/Nov/2026:10:15:30 +0000:api:5e0c7d4a-2b1f-4c3e-9a8d-6f7e8d9c0b1a';
const AT = '2026-11-23T10:15:30.512Z';
const EARLIER = '2026-11-02T08:41:07.118Z';
const LATER = '2026-11-24T10:15:30.512Z';
const LIVE_URL = 'https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/live';

const orderCreate = {
  affiliate_slug: 'alice',
  order_no: 'WEB-10001',
  total_shipping_value: 495,
  currency_code: 'EUR',
  customer: { name: 'Dan Doe', email: 'dan@example.com' },
  order_rows: [
    { product_sku: 'TENT-2P', product_name: 'Trail tent, 2 persons', price_value: 19900, tax_value: 3781, quantity: 1 },
    { product_sku: 'BOOT-42', product_name: 'Hiking boots', segment_slug: 'shoes', price_value: 12900, tax_value: 2451, quantity: 2 },
  ],
};
const orderUpdate = { total_shipping_value: 795 };
const inviteCreate = { email: 'erin@example.com', sender_email: 'owner@acme.example', content: 'Join our outdoor partner program!' };

/** The order the create example makes, as the API answers it (its row uuids fixed rather than random). */
const builtOrder = buildOrder(orderCreate, { uuid: DEMO.orderUuid, seq: 1, created_at: AT });
const ROW_UUIDS = ['c3d4e5f6-0718-4293-a4b5-c6d7e8f90a1b', 'd4e5f607-1829-43a4-b5c6-d7e8f90a1b2c'];
const order = toOrderResponse({
  ...builtOrder,
  order_rows: builtOrder.order_rows.map((row, index) => ({ ...row, uuid: ROW_UUIDS[index] ?? row.uuid })),
});
const [orderRow] = order.order_rows;
const cancelledOrder = { ...order, cancelled_at: AT };
const createdOrder = { uuid: order.uuid, order_no: order.order_no };
const tier = { name: 'Gold', slug: 'gold', description: 'Top partners', created_at: EARLIER, updated_at: EARLIER };
const segment = {
  uuid: DEMO.segmentUuid,
  name: 'Shoes',
  description: 'Footwear',
  type: { name: 'Percentage', slug: 'percentage' },
  slugs: ['shoes', 'boots'],
  skus: ['BOOT-42'],
  created_at: EARLIER,
  updated_at: EARLIER,
};
const segmentTierRate = { name: tier.name, slug: tier.slug, rate: 12.5, visual_rate: '12.5%' };
const segmentDetail = { ...segment, tiers: [segmentTierRate, { name: 'Silver', slug: 'silver', rate: 9, visual_rate: '9%' }] };
const affiliate = {
  name: 'Alice Adams',
  slug: 'alice',
  status: 'active',
  tier: { name: tier.name, slug: tier.slug },
  accepted_at: EARLIER,
  created_at: EARLIER,
};
const affiliateRequest = {
  uuid: DEMO.pendingRequestUuid,
  affiliate: { name: 'Bob Brown', slug: 'bob' },
  status: 'pending',
  requested_at: EARLIER,
};
const invite = { uuid: DEMO.inviteUuid, email: 'erin@example.com', link_used_at: null, created_at: AT, updated_at: AT };
/** The first page, as the list examples ask for it. */
const pageParameters = { per_page: DEFAULT_PER_PAGE, page: 1 };
/** The first page of a route's list of `total` items, with its links, as the list answers it. */
const pagination = (id: RouteId, total: number) =>
  laravelPagination(total, pageParameters, { url: `${LIVE_URL}${route(id).path}`, rawQuery: { per_page: String(DEFAULT_PER_PAGE) } });
const invitePagination = invitePaginationOf(1, 1, pageParameters);

const webhookCreate = SAMPLES['webhooks-create'].body;
const webhook = {
  uuid: DEMO.webhookUuid,
  ...webhookCreate,
  enabled: true,
  disabled_reason: null,
  failing_since: null,
  created_at: AT,
  updated_at: AT,
};
const EXAMPLE_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const createdWebhook = { ...webhook, secret: EXAMPLE_SECRET };
const rotatedWebhook = { ...createdWebhook, secret: 'whsec_Q2hhbmdlZCBzZWNyZXQgZm9yIHRoZSBkZW1v', previous_secret_expires_at: LATER };
/** The demo endpoint's delivery on record (local/demo.ts), so the resend example names one that exists. */
const delivery = {
  event_id: DEMO_DELIVERY_EVENT_ID,
  event_type: 'order.created',
  status: 'succeeded',
  attempt: 1,
  response_status: 200,
  latency_ms: 84,
  response_body: '{"received":true}',
  error: null,
  next_attempt_at: null,
  last_attempt_at: AT,
  created_at: AT,
};
const queuedDelivery = { event_id: 'evt_test_4f1c2b3a-5d6e-4f70-8a9b-0c1d2e3f4a5b', event_type: 'webhook.test' };
const recovery = { since: EARLIER, queued: 3, next_since: null };
const cursorPagination = { per_page: 15, next_cursor: encodeCursor(`${AT}#${DEMO_DELIVERY_EVENT_ID}`, 'example') };
const commission = {
  order_uuid: order.uuid,
  order_no: order.order_no,
  affiliate_slug: order.affiliate_slug,
  tier_slug: tier.slug,
  currency_code: order.currency.code,
  amount: 2388,
  net_amount: 2388,
  order_version: 1,
  booked_at: AT,
};

const loggedEvents = [
  { id: DEMO_DELIVERY_EVENT_ID, type: 'order.created', timestamp: AT, data: { order } },
  { id: `evt_commission_${DEMO.orderUuid}_accrual_v1`, type: 'commission.accrued', timestamp: AT, data: { commission } },
];
const logCursor = {
  next_cursor: encodeEventCursor('live', DEMO.merchantId, {
    position: eventPosition('4900000000000012345678901', 1),
    since: Math.floor(Date.parse(AT) / 1000),
  }),
  has_more: false,
};

/** What the validation answers for an input: the real messages, run through the real schema. */
export const validationErrors = (schema: $ZodType, input: unknown): FieldErrors => {
  const result = z.safeParse(schema, input);
  if (result.success) throw new Error(`the invalid example ${JSON.stringify(input)} is valid`);
  return laravelErrors(result.error.issues, input);
};

/** A schema the document names in its components, with its example when it has one. */
export type Named = [schema: $ZodType, example?: unknown];

export const eventSchemaName = (type: string) => `${pascalCase(type)}Event`;

/** The shared payloads, named in components (the envelopes per operation are named after it). */
export const NAMED_OUTPUT: Record<string, Named> = {
  Order: [R.orderResponse, order],
  OrderRow: [R.orderRowResponse, orderRow],
  Currency: [R.currencyResponse, order.currency],
  CreatedOrder: [R.createdOrderResponse, createdOrder],
  Affiliate: [R.affiliateResponse, affiliate],
  AffiliateRequest: [R.affiliateRequestResponse, affiliateRequest],
  AcceptedAffiliateRequest: [R.acceptedRequestResponse, { ...affiliateRequest, status: 'active' }],
  Invite: [R.inviteResponse, invite],
  Tier: [R.tierResponse, tier],
  Segment: [R.segmentResponse, segment],
  SegmentDetail: [R.segmentDetailResponse, segmentDetail],
  SegmentTierRate: [R.segmentTierRate, segmentTierRate],
  Pagination: [R.laravelPaginationSchema, pagination('orders-list', 42)],
  InvitePagination: [R.invitePaginationSchema, invitePagination],
  CursorPagination: [R.cursorPaginationSchema, cursorPagination],
  Webhook: [R.webhookResponse, webhook],
  CreatedWebhook: [R.createdWebhookResponse, createdWebhook],
  RotatedWebhook: [R.rotatedWebhookResponse, rotatedWebhook],
  WebhookDelivery: [R.webhookDeliveryResponse, delivery],
  QueuedDelivery: [R.queuedDeliveryResponse, queuedDelivery],
  Recovery: [R.recoveryResponse, recovery],
  Commission: [R.commissionEventData, commission],
  LoggedEvent: [R.loggedEventResponse, loggedEvents[0]],
  ...Object.fromEntries(Object.entries(R.webhookEventPayloads).map(([type, schema]) => [eventSchemaName(type), [schema]])),
  TraceId: [R.traceIdSchema, EXAMPLE_TRACE_ID],
  FieldErrors: [R.fieldErrorsSchema, validationErrors(orderCreateBody, { ...orderCreate, order_no: undefined })],
  Failure: [R.v2Failure],
  GatewayFailure: [R.gatewayFailure],
  LegacyUnauthenticated: [R.legacyUnauthenticated],
  LegacyInvalid: [R.legacyInvalid],
  LegacyRefused: [R.legacyRefused],
};

/** The request bodies, named in components. */
export const NAMED_INPUT: Record<string, Named> = {
  OrderCreate: [orderCreateBody, orderCreate],
  OrderUpdate: [orderUpdateBody, orderUpdate],
  InviteCreate: [inviteCreateBody, inviteCreate],
  WebhookCreate: [webhookCreateBody, webhookCreate],
  WebhookUpdate: [webhookUpdateBody, { enabled: true }],
  WebhookRecover: [webhookRecoverBody, { since: EARLIER }],
};

/** What the document says of a route besides its manifest entry, its request schemas and its response (functions/responses.ts). */
export type OperationDoc = {
  summary: string;
  description?: string;
  /** 422 for a business rule besides validation (named in the description). */
  refusals?: string;
  /** The envelope's `data` of the success answer, when not the example of its response schema (examples of NAMED_OUTPUT). */
  answer?: unknown;
  /** Its `meta`: a list's pagination, a report's `as_of`. */
  answerMeta?: Meta;
  /** Path and query parameter values (path values are the event sample's: the demo merchant's resources). */
  parameters?: Record<string, string | number>;
  /** The request body, when not the example of its schema (NAMED_INPUT). */
  body?: unknown;
  /** An input the route's validation (its handler's body or query schema) refuses: the 422 keyed by field shows its answer. */
  invalid?: unknown;
  /** What `refusals` names, by example name (422 with `message`, or keyed by the field). */
  refused?: Record<string, FieldErrors>;
};

const badPage = { per_page: '500', page: '0' };
/** The first page of a list of `total` items, and a page it refuses. */
const listPage = (id: RouteId, total: number) => ({
  answerMeta: { pagination: pagination(id, total) },
  parameters: pageParameters,
  invalid: badPage,
});
/** What both order creations refuse. */
const orderCreation = {
  refusals: "a duplicate `order_no`, an unknown or inactive affiliate, a currency other than the account's",
  invalid: {
    affiliate_slug: 'alice',
    order_no: '',
    total_shipping_value: -1,
    currency_code: 'EURO',
    order_rows: [{ product_name: 'Trail tent', price_value: 19900, quantity: 0 }],
  },
  refused: {
    order_no_taken: { order_no: [ORDER_MESSAGES.orderNoTaken] },
    affiliate_invalid: { affiliate_slug: [ORDER_MESSAGES.affiliateInvalid] },
    currency_mismatch: { currency_code: [ORDER_MESSAGES.currencyMismatch('EUR')] },
  },
};
/** What deciding an affiliate request refuses. */
const decision = {
  refusals: 'the request is already decided',
  refused: {
    already_accepted: { message: [REQUEST_MESSAGES.alreadyAccepted] },
    already_declined: { message: [REQUEST_MESSAGES.alreadyDeclined] },
  },
};

/** A November report row in euros: its net is what was accrued plus what was reversed. */
const reportRow = (affiliate_slug: string, orders: number, sales_value: number, accrued_value: number, reversed_value: number) => ({
  affiliate_slug,
  period: '2026-11',
  currency_code: 'EUR',
  orders,
  sales_value,
  accrued_value,
  reversed_value,
  net_value: accrued_value + reversed_value,
});

/** One entry per route of the manifest: a route without one does not compile. */
const OPERATIONS: Record<RouteId, OperationDoc> = {
  'orders-create-legacy': {
    summary: 'Create an order (legacy envelope)',
    description: 'The first version of order creation, kept for existing integrations: same rules as the V2 endpoint, legacy envelope.',
    ...orderCreation,
  },
  'orders-create': { summary: 'Create an order', ...orderCreation },
  'orders-list': { summary: 'List orders', description: 'Newest first.', ...listPage('orders-list', 42) },
  'orders-get': { summary: 'Get an order' },
  'orders-update': {
    summary: 'Update the shipping value of an order',
    description: '`total_shipping_value` is the only field that can change; any other field is refused (422).',
    refusals: 'the order is cancelled',
    answer: { order: { ...order, ...orderUpdate } },
    invalid: { total_shipping_value: '7.95', order_no: 'WEB-10002' },
    refused: { cancelled: { message: [ORDER_MESSAGES.cancelledNotUpdatable] } },
  },
  'orders-cancel': {
    summary: 'Cancel an order',
    refusals: 'the order is already cancelled, older than one month, or linked to a payment',
    answer: { order: cancelledOrder },
    refused: {
      already_cancelled: { message: [ORDER_MESSAGES.alreadyCancelled] },
      too_old: { message: [ORDER_MESSAGES.tooOldToCancel] },
      linked_to_payment: { message: [ORDER_MESSAGES.linkedToPayment] },
    },
  },
  'affiliates-list': {
    summary: 'List affiliates',
    ...listPage('affiliates-list', 1),
    parameters: { ...pageParameters, tier_slug: 'gold' },
  },
  'affiliates-get': { summary: 'Get an affiliate' },
  'invites-create': {
    summary: 'Invite an affiliate',
    description: 'Sends the invitation e-mail. `sender_email` must be a user of the merchant.',
    refusals: 'the address is already invited, the sender is not a user of the merchant',
    invalid: { email: 'erin.example.com', sender_email: '' },
    refused: { email_taken: { email: [INVITE_MESSAGES.emailTaken] }, sender_invalid: { sender_email: [INVITE_MESSAGES.senderInvalid] } },
  },
  'invites-list': {
    summary: 'List invitations',
    description: '`data` is the array itself; the pagination is the invites form.',
    answerMeta: { pagination: invitePagination },
    parameters: { ...pageParameters, email: 'example.com' },
    invalid: badPage,
  },
  'affiliate-requests-list': {
    summary: 'List affiliate requests',
    description: '`data` is the array itself.',
    answerMeta: { pagination: pagination('affiliate-requests-list', 2) },
    parameters: { status: 'pending', ...pageParameters },
    invalid: { status: 'approved' },
  },
  'affiliate-requests-get': { summary: 'Get an affiliate request' },
  'affiliate-requests-accept': {
    summary: 'Accept an affiliate request',
    description: 'The affiliate becomes (or stays) active; the response reports the request as `active`.',
    ...decision,
  },
  'affiliate-requests-decline': {
    summary: 'Decline an affiliate request',
    answer: { affiliate_request: { ...affiliateRequest, uuid: DEMO.secondPendingRequestUuid, status: 'declined' } },
    ...decision,
  },
  'tiers-list': { summary: 'List tiers', ...listPage('tiers-list', 1) },
  'tiers-get': { summary: 'Get a tier' },
  'segments-list': {
    summary: 'List segments',
    description: 'Segments without their `tiers` (the single segment has them).',
    ...listPage('segments-list', 1),
  },
  'segments-get': { summary: 'Get a segment with its rate per tier' },
  'webhooks-create': {
    summary: 'Create a webhook endpoint',
    description:
      'Events are delivered to `url` signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer shows the signing `secret` this once (the service makes it: a `secret` or any other field not listed is refused, 422). `events` empty or absent: every event type.',
    refusals: `the merchant has ${MAX_WEBHOOK_ENDPOINTS} endpoints already`,
    invalid: { url: 'http://shop.example.com/hooks', events: ['order.deleted'] },
    refused: { too_many: { message: [WEBHOOK_MESSAGES.tooMany] } },
  },
  'webhooks-list': {
    summary: 'List webhook endpoints',
    description: `Every endpoint of the merchant (at most ${MAX_WEBHOOK_ENDPOINTS}), oldest first. Secrets are never shown.`,
  },
  'webhooks-get': { summary: 'Get a webhook endpoint' },
  'webhooks-update': {
    summary: 'Update a webhook endpoint',
    description:
      'Changes `url`, `events`, `description` or `enabled`; any other field is refused (422), so nothing is silently ignored; `{}` changes nothing, `updated_at` included. Enabling an endpoint the service disabled clears its failure streak.',
    answer: { webhook: { ...webhook, enabled: false } },
    body: { enabled: false },
    invalid: { enabled: 'no' },
  },
  'webhooks-delete': {
    summary: 'Delete a webhook endpoint',
    description: 'Nothing more is delivered to it; `data` is null.',
  },
  'webhooks-rotate-secret': {
    summary: "Rotate a webhook endpoint's signing secret",
    description:
      'A new secret, shown this once. For 24 hours deliveries carry two signatures (new and previous secret), so a receiver can switch without missing one.',
  },
  'webhooks-test': {
    summary: 'Send a test event',
    description:
      'Queues a `webhook.test` event to this endpoint, whatever its filter and even when disabled; its delivery shows in the deliveries.',
  },
  'webhooks-deliveries': {
    summary: "List a webhook endpoint's deliveries",
    description: `Newest first, one entry per event: its last attempt (status code, latency, first 1 KB of the answer) and the next. Kept ${DELIVERY_RETENTION_DAYS} days. Pass \`meta.pagination.next_cursor\` as \`cursor\` for the next page.`,
    answerMeta: { pagination: cursorPagination },
    parameters: { per_page: 15 },
    invalid: { per_page: '500' },
  },
  'webhooks-resend': {
    summary: 'Resend a delivery',
    description: 'Queues the event again as a first attempt, with the same `webhook-id` (receivers deduplicate on it).',
    refusals:
      "the endpoint is disabled (enable it first; a `webhook.test` is resent all the same), or no longer subscribes to the event's type",
    answer: { delivery: { event_id: delivery.event_id, event_type: delivery.event_type } },
    refused: { endpoint_disabled: { message: [WEBHOOK_MESSAGES.disabled] } },
  },
  'webhooks-recover': {
    summary: 'Recover failed deliveries',
    description: `Queues again every delivery to this endpoint that failed since \`since\` (at most ${RECOVER_MAX_DAYS} days back; \`{}\` for all of them), oldest first, up to ${RECOVER_BATCH.toLocaleString('en-US')} per call (fewer when the events are large): when \`next_since\` is set, call again with it. Deliveries of event types the endpoint no longer subscribes to are passed over (a failed \`webhook.test\` is not: a test ignores the filter). A request without a body is refused (422).`,
    refusals: 'the endpoint is disabled (enable it first)',
    invalid: { since: '2020-01-01T00:00:00Z' },
    refused: { endpoint_disabled: { message: [WEBHOOK_MESSAGES.disabled] } },
  },
  'reports-commissions': {
    summary: 'Commission report',
    description: `What the commission ledgers add up to between \`from\` and \`to\` (UTC dates, \`to\` exclusive, at most ${MAX_REPORT_DAYS} days; default: the current month), grouped by affiliate, month or day, or by affiliate and a period. Each ledger entry counts on the UTC day it was booked: a cancel in December reverses a November accrual in December. Rows are ordered by period, then affiliate slug, then currency. Read from totals the change feed keeps: a new ledger entry is included within seconds, and \`meta.as_of\` is the time before which every ledger entry is included.`,
    answer: { rows: [reportRow('alice', 12, 238_800, 23_880, -1_990), reportRow('bob', 3, 59_700, 2_985, 0)] },
    answerMeta: { pagination: pagination('reports-commissions', 2), as_of: AT },
    parameters: { from: '2026-11-01', to: '2026-12-01', group_by: 'affiliate,month', ...pageParameters },
    invalid: { from: '2026-11-31', group_by: 'week' },
  },
  'events-list': {
    summary: 'Read the event log',
    description: [
      'Every event webhooks publish (all but `webhook.test`), exactly as they deliver it (`id` is the `webhook-id`), oldest first, for merchants that poll instead of receiving calls, or that missed deliveries.',
      `Complete and in order: a consumer that starts without \`after\` and keeps passing \`meta.next_cursor\` as \`after\` sees every event of its account exactly once; the log shows only events below a committed high-water mark, so no event ever appears behind a cursor already handed out. Events of one order come in the order they happened.`,
      `\`meta.next_cursor\` is set on every page, an empty one too: keep polling with it. Events are kept ${EVENTS_RETENTION_DAYS} days; a cursor older than that is refused (422 on \`after\`) rather than silently skipping what expired. A cursor is bound to the account and the stage (live and sandbox are separate logs).`,
      `A page examines at most ${MAX_EXAMINED_PER_PAGE_VALUE} events whatever the filters: a rare \`types\` filter may answer an empty page with \`has_more: true\`; continue from its \`next_cursor\`.`,
    ].join('\n\n'),
    refusals: 'a cursor (`after`) of another account or stage, altered, or older than the retention',
    answer: loggedEvents,
    answerMeta: logCursor,
    parameters: {
      // The start of the demo merchant's log, dated far ahead so the example never expires.
      after: encodeEventCursor('live', DEMO.merchantId, { position: LOG_START, since: Date.UTC(2100, 0, 1) / 1000 }),
      limit: 25,
      types: 'order.created,commission.accrued',
      created_gte: EARLIER,
      created_lt: '2100-01-01T00:00:00Z',
    },
    invalid: { limit: '500', types: 'order.deleted' },
    refused: { expired_cursor: { after: [EVENTS_MESSAGES.expiredCursor] }, foreign_cursor: { after: [EVENTS_MESSAGES.badCursor] } },
  },
};

export const operations = Object.fromEntries(
  ROUTE_SAMPLES.map(({ id, pathParameters }) => [
    id,
    { ...OPERATIONS[id], parameters: { ...pathParameters, ...OPERATIONS[id].parameters } },
  ]),
) as Record<RouteId, OperationDoc>;
