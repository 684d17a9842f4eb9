import * as z from 'zod/mini';
import { REQUEST_STATUSES } from '#shared/db/entities/affiliate-request';
import { DELIVERY_STATUSES } from '#shared/db/entities/webhook-delivery';
import type { toOrderResponse } from '#shared/domain/order-model';
import type {
  toAcceptedRequestResponse,
  toAffiliateRequestResponse,
  toAffiliateResponse,
  toInviteResponse,
  toSegmentDetailResponse,
  toSegmentResponse,
  toTierResponse,
} from '#shared/domain/program-model';
import type { toDeliveryResponse, toWebhookResponse } from '#shared/domain/webhook-model';
import type { invitePagination, laravelPagination } from '#shared/http/pagination';
import { TRACE_ID_PATTERN } from '#shared/http/trace';
import { TEST_EVENT_TYPE, type toCommissionEventData, WEBHOOK_EVENT_TYPES } from '#shared/webhooks/events';
import { MAX_MONEY_VALUE, MAX_QUANTITY } from './order';

/** The response payloads, written once: the OpenAPI document is generated from them (docs/openapi.md#the-contract-as-openapi). */

const timestamp = () => z.iso.datetime();
/** Amounts and counts within the limits the requests are held to, so a mock server never invents a negative price. */
const money = () => z.int().check(z.minimum(0), z.maximum(MAX_MONEY_VALUE));
const count = (min: 0 | 1) => z.int().check(z.minimum(min));
const nullableTimestamp = () => z.nullable(timestamp());
const stamps = () => ({ created_at: timestamp(), updated_at: timestamp() });
const nameAndSlug = () => z.strictObject({ name: z.string(), slug: z.string() });

export const currencyResponse = z.strictObject({ code: z.string(), name: z.string() });

export const orderRowResponse = z.strictObject({
  uuid: z.uuid(),
  product_sku: z.nullable(z.string()),
  product_name: z.string(),
  segment_slug: z.nullable(z.string()),
  price_value: money(),
  tax_value: z.nullable(money()),
  quantity: z.int().check(z.minimum(1), z.maximum(MAX_QUANTITY)),
});

export const orderResponse = z.strictObject({
  uuid: z.uuid(),
  order_no: z.string(),
  affiliate_slug: z.string(),
  total_shipping_value: money(),
  currency: currencyResponse,
  order_rows: z.array(orderRowResponse),
  customer: z.nullable(z.strictObject({ name: z.nullable(z.string()), email: z.string() })),
  cancelled_at: nullableTimestamp(),
  ...stamps(),
});

/** What the create endpoints answer about the new order (V2 `data.order`, legacy `data`). */
export const createdOrderResponse = z.strictObject({ uuid: z.uuid(), order_no: z.string() });

export const tierResponse = z.extend(nameAndSlug(), { description: z.string(), ...stamps() });

export const segmentResponse = z.strictObject({
  uuid: z.uuid(),
  name: z.string(),
  description: z.string(),
  type: z.strictObject({ name: z.string(), slug: z.literal('percentage') }),
  slugs: z.array(z.string()),
  skus: z.array(z.string()),
  ...stamps(),
});

export const segmentTierRate = z.extend(nameAndSlug(), {
  rate: z.number().check(z.minimum(0), z.maximum(100)),
  visual_rate: z.string(),
});

export const segmentDetailResponse = z.extend(segmentResponse, { tiers: z.array(segmentTierRate) });

export const affiliateResponse = z.extend(nameAndSlug(), {
  status: z.enum(['active', 'inactive']),
  tier: z.nullable(nameAndSlug()),
  accepted_at: nullableTimestamp(),
  created_at: timestamp(),
});

export const affiliateRequestResponse = z.strictObject({
  uuid: z.uuid(),
  affiliate: nameAndSlug(),
  status: z.enum([...REQUEST_STATUSES, 'active']),
  requested_at: timestamp(),
});

/** The accept endpoint reports an accepted request as `active` (spec). */
export const acceptedRequestResponse = z.extend(affiliateRequestResponse, { status: z.literal('active') });

export const inviteResponse = z.strictObject({
  uuid: z.uuid(),
  email: z.string(),
  link_used_at: nullableTimestamp(),
  ...stamps(),
});

export const laravelPaginationSchema = z.strictObject({
  current_page: count(1),
  last_page: count(1),
  per_page: count(1),
  total: count(0),
  next_page_url: z.nullable(z.url()),
  prev_page_url: z.nullable(z.url()),
});

export const invitePaginationSchema = z.strictObject({
  total: count(0),
  count: count(0),
  per_page: count(1),
  current_page: count(1),
  total_pages: count(1),
});

export const traceIdSchema = z.string().check(z.regex(TRACE_ID_PATTERN));

export const fieldErrorsSchema = z.record(z.string(), z.array(z.string()));

/** A list read by position: pass `next_cursor` as `cursor` for the next page; null on the last. */
export const cursorPaginationSchema = z.strictObject({ per_page: count(1), next_cursor: z.nullable(z.string()) });

/** The event log's place, in `meta` itself: pass `next_cursor` as `after`; `has_more` may be true on an empty page the filters skipped. */
export const logCursorSchema = z.strictObject({ next_cursor: z.string(), has_more: z.boolean() });

type PaginationKind = 'laravel' | 'invites' | 'cursor' | 'log';

/** What a route answers on success (functions/responses.ts): `data`, its pagination form, and what it adds to `meta`. */
export type RouteResponse = { data: z.ZodMiniType; pagination?: PaginationKind; meta?: Record<string, z.ZodMiniType> };

const PAGINATION_SCHEMAS = { laravel: laravelPaginationSchema, invites: invitePaginationSchema, cursor: cursorPaginationSchema };

/** `extraMeta`: what a route adds to `meta` besides the pagination (a report's `as_of`). */
export const v2Success = <T extends z.ZodMiniType>(data: T, pagination?: PaginationKind, extraMeta: Record<string, z.ZodMiniType> = {}) =>
  z.strictObject({
    success: z.literal(true),
    data,
    errors: z.null(),
    meta:
      pagination === 'log'
        ? z.strictObject({ ...logCursorSchema.shape, trace_id: traceIdSchema })
        : pagination
          ? z.strictObject({ pagination: PAGINATION_SCHEMAS[pagination], ...extraMeta, trace_id: traceIdSchema })
          : z.strictObject({ ...extraMeta, trace_id: traceIdSchema }),
  });

export const v2Failure = z.strictObject({
  success: z.literal(false),
  data: z.null(),
  errors: fieldErrorsSchema,
  meta: z.strictObject({ trace_id: traceIdSchema }),
});

/** What API Gateway and AWS WAF answer themselves, with a trace id of their own (lib/rest-api.ts). */
export const gatewayFailure = z.extend(v2Failure, { meta: z.strictObject({ trace_id: z.string() }) });

const legacyBody = <T extends z.ZodMiniType>(success: boolean, data: T) =>
  z.strictObject({ success: z.literal(success), message: z.string(), data });

export const legacySuccess = <T extends z.ZodMiniType>(data: T) => legacyBody(true, data);

export const legacyUnauthenticated = z.strictObject({ message: z.string() });
/** Legacy 422: the field messages under `data.errors`. */
export const legacyInvalid = legacyBody(false, z.strictObject({ errors: fieldErrorsSchema }));
/** Every other legacy failure: the first message, `data` an empty array. */
export const legacyRefused = legacyBody(false, z.array(z.never()).check(z.maxLength(0)));

// Webhooks: the endpoints API and the events it delivers

export const webhookResponse = z.strictObject({
  uuid: z.uuid(),
  url: z.string(),
  description: z.nullable(z.string()),
  /** The event types delivered; empty: every type. */
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  enabled: z.boolean(),
  /** Why the service disabled it (410 Gone, a failure streak); null otherwise. */
  disabled_reason: z.nullable(z.string()),
  /** When the current streak of failed deliveries began; null when the last delivery succeeded. */
  failing_since: nullableTimestamp(),
  ...stamps(),
});

/** On create: the signing secret, shown this once. */
export const createdWebhookResponse = z.extend(webhookResponse, { secret: z.string().check(z.regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)) });

/** On rotation: the new secret, shown this once, and until when the previous one still signs beside it. */
export const rotatedWebhookResponse = z.extend(createdWebhookResponse, { previous_secret_expires_at: nullableTimestamp() });

export const webhookDeliveryResponse = z.strictObject({
  event_id: z.string(),
  event_type: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempt: count(1),
  /** The receiver's status code; null when it did not answer (timeout, refused connection or address). */
  response_status: z.nullable(z.int()),
  latency_ms: z.nullable(z.number()),
  response_body: z.nullable(z.string()),
  error: z.nullable(z.string()),
  next_attempt_at: nullableTimestamp(),
  last_attempt_at: timestamp(),
  created_at: timestamp(),
});

/** A delivery queued by test or resend. */
export const queuedDeliveryResponse = z.strictObject({ event_id: z.string(), event_type: z.string() });

export const recoveryResponse = z.strictObject({
  since: timestamp(),
  queued: count(0),
  /** Set when more failed deliveries remain: recover again from here. */
  next_since: nullableTimestamp(),
});

export const commissionEventData = z.strictObject({
  order_uuid: z.uuid(),
  order_no: z.string(),
  affiliate_slug: z.string(),
  tier_slug: z.nullable(z.string()),
  currency_code: z.string(),
  /** This entry's amount in minor units (negative for a reversal) and the ledger's net after it. */
  amount: z.number(),
  net_amount: z.number(),
  order_version: count(1),
  booked_at: timestamp(),
});

/** A commission report row in minor units (docs/reports.md#what-a-row-says); `period` is `2026-11` or `2026-11-25` (UTC). */
export const commissionReportRow = z.strictObject({
  affiliate_slug: z.optional(z.string()),
  period: z.optional(z.string()),
  currency_code: z.string(),
  orders: count(0),
  sales_value: count(0),
  accrued_value: count(0),
  reversed_value: z.int().check(z.maximum(0)),
  net_value: z.int(),
});

/** `meta.as_of` of a report: every ledger entry booked before it is included; null before the first. */
export const reportMeta = { as_of: nullableTimestamp() };

const eventOf = <T extends string, D extends z.ZodMiniType>(type: T, data: D) =>
  z.strictObject({ type: z.literal(type), timestamp: timestamp(), data });

/** Every event's payload (the body of a delivery; its id is the `webhook-id` header), by type. */
export const webhookEventPayloads = {
  'order.created': eventOf('order.created', z.strictObject({ order: orderResponse })),
  'order.updated': eventOf('order.updated', z.strictObject({ order: orderResponse })),
  'order.cancelled': eventOf('order.cancelled', z.strictObject({ order: orderResponse })),
  'commission.accrued': eventOf('commission.accrued', z.strictObject({ commission: commissionEventData })),
  'commission.reversed': eventOf('commission.reversed', z.strictObject({ commission: commissionEventData })),
  'affiliate_request.created': eventOf('affiliate_request.created', z.strictObject({ affiliate_request: affiliateRequestResponse })),
  'affiliate_request.accepted': eventOf('affiliate_request.accepted', z.strictObject({ affiliate_request: affiliateRequestResponse })),
  'affiliate_request.declined': eventOf('affiliate_request.declined', z.strictObject({ affiliate_request: affiliateRequestResponse })),
  'invite.sent': eventOf('invite.sent', z.strictObject({ invite: inviteResponse })),
  'invite.accepted': eventOf('invite.accepted', z.strictObject({ invite: inviteResponse })),
  [TEST_EVENT_TYPE]: eventOf(TEST_EVENT_TYPE, z.strictObject({ webhook: z.strictObject({ uuid: z.uuid() }), message: z.string() })),
} as const;

/** An event of the event log (GET /api/v2/events): what webhooks deliver, with its id; every type but `webhook.test`. */
export const loggedEventResponse = z.union(
  WEBHOOK_EVENT_TYPES.map((type) => z.strictObject({ id: z.string(), ...webhookEventPayloads[type].shape })) as unknown as readonly [
    z.ZodMiniObject,
    ...z.ZodMiniObject[],
  ],
);

// Compile-time: what the code builds is what is documented, both ways (the legacy failures: the integration suite's validation).

export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type Check<T extends true> = T;
type Output<T extends z.ZodMiniType> = z.output<T>;

export type ResponseShapesMatch = [
  Check<Same<ReturnType<typeof toOrderResponse>, Output<typeof orderResponse>>>,
  Check<Same<ReturnType<typeof toTierResponse>, Output<typeof tierResponse>>>,
  Check<Same<ReturnType<typeof toSegmentResponse>, Output<typeof segmentResponse>>>,
  Check<Same<ReturnType<typeof toSegmentDetailResponse>, Output<typeof segmentDetailResponse>>>,
  Check<Same<ReturnType<typeof toAffiliateResponse>, Output<typeof affiliateResponse>>>,
  Check<Same<ReturnType<typeof toAffiliateRequestResponse>, Output<typeof affiliateRequestResponse>>>,
  Check<Same<ReturnType<typeof toAcceptedRequestResponse>, Output<typeof acceptedRequestResponse>>>,
  Check<Same<ReturnType<typeof toInviteResponse>, Output<typeof inviteResponse>>>,
  Check<Same<ReturnType<typeof laravelPagination>, Output<typeof laravelPaginationSchema>>>,
  Check<Same<ReturnType<typeof invitePagination>, Output<typeof invitePaginationSchema>>>,
  Check<Same<ReturnType<typeof toWebhookResponse>, Output<typeof webhookResponse>>>,
  Check<Same<Omit<ReturnType<typeof toDeliveryResponse>, 'status'>, Omit<Output<typeof webhookDeliveryResponse>, 'status'>>>,
  Check<Same<ReturnType<typeof toCommissionEventData>['commission'], Output<typeof commissionEventData>>>,
  Check<Same<keyof typeof webhookEventPayloads, (typeof WEBHOOK_EVENT_TYPES)[number] | typeof TEST_EVENT_TYPE>>,
];
