import * as z from 'zod/mini';
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
import type { InvitePagination, LaravelPagination, legacySuccessBody, v2Body } from '#shared/http/envelope';
import { MAX_MONEY_VALUE, MAX_QUANTITY } from './order';

/**
 * The response payloads, written once: the OpenAPI document (scripts/openapi.ts) is generated from
 * these, and the presenters that build them (shared/domain/*-model.ts) and the envelopes
 * (shared/http/envelope.ts) are checked against them at compile time (the `Same` checks at the
 * bottom). Only the generator and the tests import this module at run time: no function bundles it.
 *
 * Objects are strict (`additionalProperties: false` in the document), so a field the code sends
 * and the document does not list fails the integration suite's response check.
 */

const timestamp = () => z.iso.datetime();
/** Amounts and counts within the limits the requests are held to, so a mock server never invents a negative price. */
const money = () => z.int().check(z.minimum(0), z.maximum(MAX_MONEY_VALUE));
const count = (min: 0 | 1) => z.int().check(z.minimum(min));
const nullableTimestamp = () => z.nullable(timestamp());

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
  created_at: timestamp(),
  updated_at: timestamp(),
});

/** What the create endpoints answer about the new order (V2 `data.order`, legacy `data`). */
export const createdOrderResponse = z.strictObject({ uuid: z.uuid(), order_no: z.string() });

export const tierResponse = z.strictObject({
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  created_at: timestamp(),
  updated_at: timestamp(),
});

const segmentType = z.strictObject({ name: z.string(), slug: z.literal('percentage') });

export const segmentResponse = z.strictObject({
  uuid: z.uuid(),
  name: z.string(),
  description: z.string(),
  type: segmentType,
  slugs: z.array(z.string()),
  skus: z.array(z.string()),
  created_at: timestamp(),
  updated_at: timestamp(),
});

export const segmentTierRate = z.strictObject({
  name: z.string(),
  slug: z.string(),
  rate: z.number().check(z.minimum(0), z.maximum(100)),
  visual_rate: z.string(),
});

/** One segment as GET segments/{uuid} answers it: the list's shape plus the rate of each tier. */
export const segmentDetailResponse = z.extend(segmentResponse, { tiers: z.array(segmentTierRate) });

export const affiliateResponse = z.strictObject({
  name: z.string(),
  slug: z.string(),
  status: z.enum(['active', 'inactive']),
  tier: z.nullable(z.strictObject({ name: z.string(), slug: z.string() })),
  accepted_at: nullableTimestamp(),
  created_at: timestamp(),
});

const requestAffiliate = z.strictObject({ name: z.string(), slug: z.string() });

export const affiliateRequestResponse = z.strictObject({
  uuid: z.uuid(),
  affiliate: requestAffiliate,
  status: z.enum(['pending', 'accepted', 'declined', 'active']),
  requested_at: timestamp(),
});

/** The accept endpoint reports an accepted request as `active` (spec). */
export const acceptedRequestResponse = z.strictObject({
  uuid: z.uuid(),
  affiliate: requestAffiliate,
  status: z.literal('active'),
  requested_at: timestamp(),
});

export const inviteResponse = z.strictObject({
  uuid: z.uuid(),
  email: z.string(),
  link_used_at: nullableTimestamp(),
  created_at: timestamp(),
  updated_at: timestamp(),
});

// ---------------------------------------------------------------------------------------------
// Envelopes
// ---------------------------------------------------------------------------------------------

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

/** `<UTC date-time>:api:<8 hex>` (shared/http/trace.ts). */
export const traceIdSchema = z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z:api:[0-9a-f]{8}$/));

/** Field name (or `message` for the request as a whole) to its messages. */
export const fieldErrorsSchema = z.record(z.string(), z.array(z.string()));

export type PaginationKind = 'laravel' | 'invites';

export const v2Success = <T extends z.ZodMiniType>(data: T, pagination?: PaginationKind) =>
  z.strictObject({
    success: z.literal(true),
    data,
    errors: z.null(),
    meta: pagination
      ? z.strictObject({ pagination: pagination === 'laravel' ? laravelPaginationSchema : invitePaginationSchema, trace_id: traceIdSchema })
      : z.strictObject({ trace_id: traceIdSchema }),
  });

export const v2Failure = z.strictObject({
  success: z.literal(false),
  data: z.null(),
  errors: fieldErrorsSchema,
  meta: z.strictObject({ trace_id: traceIdSchema }),
});

/**
 * What API Gateway and AWS WAF answer themselves (429, a 4xx before the function runs): the V2
 * failure envelope with a trace id of their own (lib/rest-api.ts), on every path.
 */
export const gatewayFailure = z.strictObject({
  success: z.literal(false),
  data: z.null(),
  errors: fieldErrorsSchema,
  meta: z.strictObject({ trace_id: z.string() }),
});

export const legacySuccess = <T extends z.ZodMiniType>(data: T) => z.strictObject({ success: z.literal(true), message: z.string(), data });

/** Legacy 401. */
export const legacyUnauthenticated = z.strictObject({ message: z.string() });
/** Legacy 422: the field messages under `data.errors`. */
export const legacyInvalid = z.strictObject({
  success: z.literal(false),
  message: z.string(),
  data: z.strictObject({ errors: fieldErrorsSchema }),
});
/** Every other legacy failure: the first message, `data` an empty array. */
export const legacyRefused = z.strictObject({
  success: z.literal(false),
  message: z.string(),
  data: z.array(z.never()).check(z.maxLength(0)),
});

// ---------------------------------------------------------------------------------------------
// Compile-time: what the code builds is what is documented, both ways (type imports only). The
// legacy failures (typed `success: boolean` by legacyFailureBody) are checked at run time only, by
// the integration suite's response validation.
// ---------------------------------------------------------------------------------------------

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Check<T extends true> = T;
type Output<T extends z.ZodMiniType> = z.output<T>;

export type ResponseShapesMatch = [
  Check<Same<ReturnType<typeof toOrderResponse>, Output<typeof orderResponse>>>,
  Check<Same<ReturnType<typeof toTierResponse>, Output<typeof tierResponse>>>,
  Check<Same<ReturnType<typeof toSegmentResponse>, Output<typeof segmentResponse>>>,
  Check<Same<ReturnType<typeof toSegmentDetailResponse>, Output<typeof segmentDetailResponse>>>,
  Check<Same<ReturnType<typeof toAffiliateResponse>, Output<typeof affiliateResponse>>>,
  Check<Same<ReturnType<typeof toAffiliateRequestResponse>, Output<typeof affiliateRequestResponse>>>,
  // The presenter's `status` is the constant ACCEPTED_RESPONSE_STATUS, typed string: the rest must match.
  Check<Same<Omit<ReturnType<typeof toAcceptedRequestResponse>, 'status'>, Omit<Output<typeof acceptedRequestResponse>, 'status'>>>,
  Check<Same<ReturnType<typeof toInviteResponse>, Output<typeof inviteResponse>>>,
  Check<Same<LaravelPagination, Output<typeof laravelPaginationSchema>>>,
  Check<Same<InvitePagination, Output<typeof invitePaginationSchema>>>,
  Check<Same<ReturnType<typeof v2Body>['success'], boolean>>,
  Check<Same<keyof ReturnType<typeof v2Body>, keyof Output<typeof v2Failure>>>,
  Check<Same<keyof ReturnType<typeof legacySuccessBody>, keyof Output<ReturnType<typeof legacySuccess>>>>,
];
