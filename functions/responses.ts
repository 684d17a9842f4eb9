import * as z from 'zod/mini';
import type { RouteResponse } from '#shared/schemas/responses';
import * as R from '#shared/schemas/responses';
import type { RouteId } from './routes';

/**
 * What each route answers on success: its `data`, pagination form and extra `meta`. The OpenAPI document is
 * generated from these, and each handler's reply is typed by them (a type import: no function bundles them).
 */
const obj = <T extends Record<string, z.ZodMiniType>>(shape: T) => z.strictObject(shape);

export const responses = {
  'orders-create-legacy': { data: R.createdOrderResponse },
  'orders-create': { data: obj({ order: R.createdOrderResponse }) },
  'orders-list': { data: obj({ orders: z.array(R.orderResponse) }), pagination: 'laravel' },
  'orders-get': { data: obj({ order: R.orderResponse }) },
  'orders-update': { data: obj({ order: R.orderResponse }) },
  'orders-cancel': { data: obj({ order: R.orderResponse }) },
  'affiliates-list': { data: obj({ affiliates: z.array(R.affiliateResponse) }), pagination: 'laravel' },
  'affiliates-get': { data: obj({ affiliate: R.affiliateResponse }) },
  'invites-create': { data: obj({ invite: R.inviteResponse }) },
  'invites-list': { data: z.array(R.inviteResponse), pagination: 'invites' },
  'affiliate-requests-list': { data: z.array(R.affiliateRequestResponse), pagination: 'laravel' },
  'affiliate-requests-get': { data: obj({ affiliate_request: R.affiliateRequestResponse }) },
  'affiliate-requests-accept': { data: obj({ affiliate_request: R.acceptedRequestResponse }) },
  'affiliate-requests-decline': { data: obj({ affiliate_request: R.affiliateRequestResponse }) },
  'tiers-list': { data: obj({ tiers: z.array(R.tierResponse) }), pagination: 'laravel' },
  'tiers-get': { data: obj({ tier: R.tierResponse }) },
  'segments-list': { data: obj({ segments: z.array(R.segmentResponse) }), pagination: 'laravel' },
  'segments-get': { data: obj({ segment: R.segmentDetailResponse }) },
  'webhooks-create': { data: obj({ webhook: R.createdWebhookResponse }) },
  'webhooks-list': { data: obj({ webhooks: z.array(R.webhookResponse) }) },
  'webhooks-get': { data: obj({ webhook: R.webhookResponse }) },
  'webhooks-update': { data: obj({ webhook: R.webhookResponse }) },
  'webhooks-delete': { data: z.null() },
  'webhooks-rotate-secret': { data: obj({ webhook: R.rotatedWebhookResponse }) },
  'webhooks-test': { data: obj({ delivery: R.queuedDeliveryResponse }) },
  'webhooks-deliveries': { data: obj({ deliveries: z.array(R.webhookDeliveryResponse) }), pagination: 'cursor' },
  'webhooks-resend': { data: obj({ delivery: R.queuedDeliveryResponse }) },
  'webhooks-recover': { data: obj({ recovery: R.recoveryResponse }) },
  'reports-commissions': {
    data: obj({ rows: z.array(R.commissionReportRow) }),
    pagination: 'laravel',
    meta: R.reportMeta,
  },
  'events-list': { data: z.array(R.loggedEventResponse), pagination: 'log' },
} satisfies Record<RouteId, RouteResponse>;

/** The `data` a route's handler answers, as its response schema outputs it. */
export type ReplyData<Id extends RouteId> = z.output<(typeof responses)[Id]['data']>;
