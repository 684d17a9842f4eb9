import * as z from 'zod/mini';
import type { RouteResponse } from '#shared/schemas/responses';
import * as R from '#shared/schemas/responses';
import type { RouteId } from './routes';

/** What each route answers on success: the OpenAPI document is generated from these, and each handler's reply typed by them. */
export const responses = {
  'orders-create-legacy': { data: R.createdOrderResponse },
  'orders-create': { data: z.strictObject({ order: R.createdOrderResponse }) },
  'orders-list': { data: z.strictObject({ orders: z.array(R.orderResponse) }), pagination: 'laravel' },
  'orders-get': { data: z.strictObject({ order: R.orderResponse }) },
  'orders-update': { data: z.strictObject({ order: R.orderResponse }) },
  'orders-cancel': { data: z.strictObject({ order: R.orderResponse }) },
  'affiliates-list': { data: z.strictObject({ affiliates: z.array(R.affiliateResponse) }), pagination: 'laravel' },
  'affiliates-get': { data: z.strictObject({ affiliate: R.affiliateResponse }) },
  'invites-create': { data: z.strictObject({ invite: R.inviteResponse }) },
  'invites-list': { data: z.array(R.inviteResponse), pagination: 'invites' },
  'affiliate-requests-list': { data: z.array(R.affiliateRequestResponse), pagination: 'laravel' },
  'affiliate-requests-get': { data: z.strictObject({ affiliate_request: R.affiliateRequestResponse }) },
  'affiliate-requests-accept': { data: z.strictObject({ affiliate_request: R.acceptedRequestResponse }) },
  'affiliate-requests-decline': { data: z.strictObject({ affiliate_request: R.affiliateRequestResponse }) },
  'tiers-list': { data: z.strictObject({ tiers: z.array(R.tierResponse) }), pagination: 'laravel' },
  'tiers-get': { data: z.strictObject({ tier: R.tierResponse }) },
  'segments-list': { data: z.strictObject({ segments: z.array(R.segmentResponse) }), pagination: 'laravel' },
  'segments-get': { data: z.strictObject({ segment: R.segmentDetailResponse }) },
  'webhooks-create': { data: z.strictObject({ webhook: R.createdWebhookResponse }) },
  'webhooks-list': { data: z.strictObject({ webhooks: z.array(R.webhookResponse) }) },
  'webhooks-get': { data: z.strictObject({ webhook: R.webhookResponse }) },
  'webhooks-update': { data: z.strictObject({ webhook: R.webhookResponse }) },
  'webhooks-delete': { data: z.null() },
  'webhooks-rotate-secret': { data: z.strictObject({ webhook: R.rotatedWebhookResponse }) },
  'webhooks-test': { data: z.strictObject({ delivery: R.queuedDeliveryResponse }) },
  'webhooks-deliveries': { data: z.strictObject({ deliveries: z.array(R.webhookDeliveryResponse) }), pagination: 'cursor' },
  'webhooks-resend': { data: z.strictObject({ delivery: R.queuedDeliveryResponse }) },
  'webhooks-recover': { data: z.strictObject({ recovery: R.recoveryResponse }) },
  'reports-commissions': {
    data: z.strictObject({ rows: z.array(R.commissionReportRow) }),
    pagination: 'laravel',
    meta: R.reportMeta,
  },
  'events-list': { data: z.array(R.loggedEventResponse), pagination: 'log' },
} satisfies Record<RouteId, RouteResponse>;

/** The `data` a route's handler answers, as its response schema outputs it. */
export type ReplyData<Id extends RouteId> = z.output<(typeof responses)[Id]['data']>;
