import * as z from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';
import { type RouteId, route } from '#functions/routes';
import { pascalCase } from '#lib/function-specs';
import { DEMO, DEMO_DELIVERY_EVENT_ID } from '#local/demo';
import { eventPosition, LOG_START } from '#shared/db/entities/event-log';
import { buildOrder } from '#shared/db/entities/order';
import { encodeCursor as encodeEventCursor } from '#shared/domain/event-cursor';
import { ORDER_MESSAGES, toOrderResponse } from '#shared/domain/order-model';
import {
  ApiError,
  busy,
  type FieldErrors,
  IDEMPOTENCY_MESSAGES,
  INVITE_MESSAGES,
  keyReused,
  MESSAGES,
  notFound,
  REQUEST_MESSAGES,
  unauthenticated,
} from '#shared/errors';
import { parseJsonBody } from '#shared/http/json-body';
import { DEFAULT_PER_PAGE, encodeCursor, invitePagination as invitePaginationOf, laravelPagination } from '#shared/http/pagination';
import { EVENTS_MESSAGES } from '#shared/schemas/events';
import { orderCreateBody, orderUpdateBody } from '#shared/schemas/order';
import { inviteCreateBody } from '#shared/schemas/program';
import * as R from '#shared/schemas/responses';
import { WEBHOOK_MESSAGES, webhookCreateBody, webhookRecoverBody, webhookUpdateBody } from '#shared/schemas/webhooks';
import { laravelErrors } from '#shared/validation/messages';
import { ROUTE_SAMPLES, SAMPLES } from './event-samples';

/**
 * The examples of openapi.json: realistic payloads beside the schemas the document names, and per operation the request and
 * the answers, success and failure, in the route's envelope. The request examples use the demo
 * merchant of `npm start`, so "Try it out" on the local /docs page succeeds with the demo token.
 * Every error message is one the code answers: imported, or produced by running the real
 * validation on a bad input.
 */

export const EXAMPLE_TRACE_ID = '2026-11-23T10:15:30Z:api:3f9a2c1b';
/** A trace id as API Gateway writes it in its own answers (lib/rest-api.ts). */
export const EXAMPLE_GATEWAY_TRACE_ID = '23/Nov/2026:10:15:30 +0000:api:5e0c7d4a-2b1f-4c3e-9a8d-6f7e8d9c0b1a';
const AT = '2026-11-23T10:15:30.512Z';
const EARLIER = '2026-11-02T08:41:07.118Z';
const LATER = '2026-11-24T10:15:30.512Z';
const LIVE_URL = 'https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/live';

// ---------------------------------------------------------------------------------------------
// Payloads
// ---------------------------------------------------------------------------------------------

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
const segmentTierRate = { name: 'Gold', slug: 'gold', rate: 12.5, visual_rate: '12.5%' };
const segmentDetail = { ...segment, tiers: [segmentTierRate, { name: 'Silver', slug: 'silver', rate: 9, visual_rate: '9%' }] };
const affiliate = {
  name: 'Alice Adams',
  slug: 'alice',
  status: 'active',
  tier: { name: 'Gold', slug: 'gold' },
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
  order_uuid: DEMO.orderUuid,
  order_no: 'WEB-10001',
  affiliate_slug: 'alice',
  tier_slug: 'gold',
  currency_code: 'EUR',
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

// ---------------------------------------------------------------------------------------------
// Per operation
// ---------------------------------------------------------------------------------------------

export type OperationExamples = {
  /** The envelope's `data` of the success answer, and its pagination for a list. */
  data: unknown;
  pagination?: unknown;
  /** What `meta` holds besides the pagination and the trace id. */
  meta?: { as_of: string | null };
  /** Path and query parameter values (path values are the event sample's: the demo merchant's resources). */
  parameters?: Record<string, string | number>;
  /** The request body, when not the example of its schema (NAMED_INPUT). */
  body?: unknown;
  /** An input the route's validation (its handler's body or query schema) refuses: the 422 keyed by field shows its answer. */
  invalid?: unknown;
  /** A business rule's refusals (422 with `message`, or keyed by the field), by example name. */
  refusals?: Record<string, FieldErrors>;
};

const badPage = { per_page: '500', page: '0' };
const badOrder = {
  affiliate_slug: 'alice',
  order_no: '',
  total_shipping_value: -1,
  currency_code: 'EURO',
  order_rows: [{ product_name: 'Trail tent', price_value: 19900, quantity: 0 }],
};
const orderRefusals = {
  order_no_taken: { order_no: [ORDER_MESSAGES.orderNoTaken] },
  affiliate_invalid: { affiliate_slug: [ORDER_MESSAGES.affiliateInvalid] },
  currency_mismatch: { currency_code: [ORDER_MESSAGES.currencyMismatch('EUR')] },
};
const decisionRefusals = {
  already_accepted: { message: [REQUEST_MESSAGES.alreadyAccepted] },
  already_declined: { message: [REQUEST_MESSAGES.alreadyDeclined] },
};

const EXAMPLES: Record<RouteId, OperationExamples> = {
  'webhooks-create': {
    data: { webhook: createdWebhook },
    invalid: { url: 'http://shop.example.com/hooks', events: ['order.deleted'] },
    refusals: { too_many: { message: [WEBHOOK_MESSAGES.tooMany] } },
  },
  'webhooks-list': { data: { webhooks: [webhook] } },
  'webhooks-get': { data: { webhook } },
  'webhooks-update': {
    data: { webhook: { ...webhook, enabled: false } },
    body: { enabled: false },
    invalid: { enabled: 'no' },
  },
  'webhooks-delete': { data: null },
  'webhooks-rotate-secret': { data: { webhook: rotatedWebhook } },
  'webhooks-test': { data: { delivery: queuedDelivery } },
  'webhooks-deliveries': {
    data: { deliveries: [delivery] },
    pagination: cursorPagination,
    parameters: { per_page: 15 },
    invalid: { per_page: '500' },
  },
  'webhooks-resend': {
    data: { delivery: { event_id: delivery.event_id, event_type: delivery.event_type } },
    refusals: { endpoint_disabled: { message: [WEBHOOK_MESSAGES.disabled] } },
  },
  'reports-commissions': {
    data: {
      rows: [
        {
          affiliate_slug: 'alice',
          period: '2026-11',
          currency_code: 'EUR',
          orders: 12,
          sales_value: 238_800,
          accrued_value: 23_880,
          reversed_value: -1_990,
          net_value: 21_890,
        },
        {
          affiliate_slug: 'bob',
          period: '2026-11',
          currency_code: 'EUR',
          orders: 3,
          sales_value: 59_700,
          accrued_value: 2_985,
          reversed_value: 0,
          net_value: 2_985,
        },
      ],
    },
    pagination: pagination('reports-commissions', 2),
    meta: { as_of: AT },
    parameters: { from: '2026-11-01', to: '2026-12-01', group_by: 'affiliate,month', ...pageParameters },
    invalid: { from: '2026-11-31', group_by: 'week' },
  },
  'webhooks-recover': {
    data: { recovery },
    invalid: { since: '2020-01-01T00:00:00Z' },
    refusals: { endpoint_disabled: { message: [WEBHOOK_MESSAGES.disabled] } },
  },
  'events-list': {
    data: loggedEvents,
    pagination: logCursor,
    parameters: {
      // The start of the demo merchant's log; its time is far ahead, so the example never expires.
      after: encodeEventCursor('live', DEMO.merchantId, { position: LOG_START, since: Date.UTC(2100, 0, 1) / 1000 }),
      limit: 25,
      types: 'order.created,commission.accrued',
      created_gte: EARLIER,
      created_lt: '2100-01-01T00:00:00Z',
    },
    invalid: { limit: '500', types: 'order.deleted' },
    refusals: {
      expired_cursor: { after: [EVENTS_MESSAGES.expiredCursor] },
      foreign_cursor: { after: [EVENTS_MESSAGES.badCursor] },
    },
  },
  'orders-create-legacy': { data: createdOrder, invalid: badOrder, refusals: orderRefusals },
  'orders-create': { data: { order: createdOrder }, invalid: badOrder, refusals: orderRefusals },
  'orders-list': {
    data: { orders: [order] },
    pagination: pagination('orders-list', 42),
    parameters: pageParameters,
    invalid: badPage,
  },
  'orders-get': { data: { order } },
  'orders-update': {
    data: { order: { ...order, ...orderUpdate } },
    invalid: { total_shipping_value: '7.95', order_no: 'WEB-10002' },
    refusals: { cancelled: { message: [ORDER_MESSAGES.cancelledNotUpdatable] } },
  },
  'orders-cancel': {
    data: { order: cancelledOrder },
    refusals: {
      already_cancelled: { message: [ORDER_MESSAGES.alreadyCancelled] },
      too_old: { message: [ORDER_MESSAGES.tooOldToCancel] },
      linked_to_payment: { message: [ORDER_MESSAGES.linkedToPayment] },
    },
  },
  'affiliates-list': {
    data: { affiliates: [affiliate] },
    pagination: pagination('affiliates-list', 1),
    parameters: { ...pageParameters, tier_slug: 'gold' },
    invalid: badPage,
  },
  'affiliates-get': { data: { affiliate } },
  'invites-create': {
    data: { invite },
    invalid: { email: 'erin.example.com', sender_email: '' },
    refusals: {
      email_taken: { email: [INVITE_MESSAGES.emailTaken] },
      sender_invalid: { sender_email: [INVITE_MESSAGES.senderInvalid] },
    },
  },
  'invites-list': {
    data: [invite],
    pagination: invitePagination,
    parameters: { ...pageParameters, email: 'example.com' },
    invalid: badPage,
  },
  'affiliate-requests-list': {
    data: [affiliateRequest],
    pagination: pagination('affiliate-requests-list', 2),
    parameters: { status: 'pending', ...pageParameters },
    invalid: { status: 'approved' },
  },
  'affiliate-requests-get': { data: { affiliate_request: affiliateRequest } },
  'affiliate-requests-accept': {
    data: { affiliate_request: { ...affiliateRequest, status: 'active' } },
    refusals: decisionRefusals,
  },
  'affiliate-requests-decline': {
    data: { affiliate_request: { ...affiliateRequest, uuid: DEMO.secondPendingRequestUuid, status: 'declined' } },
    refusals: decisionRefusals,
  },
  'tiers-list': {
    data: { tiers: [tier] },
    pagination: pagination('tiers-list', 1),
    parameters: pageParameters,
    invalid: badPage,
  },
  'tiers-get': { data: { tier } },
  'segments-list': {
    data: { segments: [segment] },
    pagination: pagination('segments-list', 1),
    parameters: pageParameters,
    invalid: badPage,
  },
  'segments-get': { data: { segment: segmentDetail } },
};

export const operationExamples = Object.fromEntries(
  ROUTE_SAMPLES.map(({ id, pathParameters }) => [id, { ...EXAMPLES[id], parameters: { ...pathParameters, ...EXAMPLES[id].parameters } }]),
) as Record<RouteId, OperationExamples>;

/** What the JSON body step answers for a body that is not JSON. */
const malformedJson = (): FieldErrors => {
  try {
    parseJsonBody({ body: '{"order_no": ', isBase64Encoded: false });
  } catch (error) {
    if (error instanceof ApiError) return error.errors;
  }
  throw new Error('a malformed body was accepted');
};

/** The failures every route shares, by status: the real answers of the code. */
export const commonFailures = {
  unauthenticated: unauthenticated().errors,
  malformedJson: malformedJson(),
  notFound: notFound().errors,
  busy: busy().errors,
  wrongTokenKind: { message: [MESSAGES.wrongTokenKind.live] },
  wrongTokenKindSandbox: { message: [MESSAGES.wrongTokenKind.sandbox] },
  noLiveOrders: { message: [MESSAGES.noLiveOrders] },
  tooManyAttempts: { message: [MESSAGES.tooManyAttempts] },
  bodyTooLarge: { message: [MESSAGES.bodyTooLarge] },
  idempotencyReused: keyReused().errors,
  idempotencyInFlight: { message: [IDEMPOTENCY_MESSAGES.inFlight] },
  idempotencyKeyMalformed: { idempotency_key: [IDEMPOTENCY_MESSAGES.required] },
} satisfies Record<string, FieldErrors>;
