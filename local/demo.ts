import type { Fixture } from '#shared/admin/fixture';
import { type SeedResult, seedFixture } from '#shared/admin/seed';
import type { Store } from '#shared/admin/store';
import type { Stage } from '#shared/config';
import { recordWebhookDelivery } from '#shared/db/entities/webhook-delivery';
import { putWebhookEndpoint } from '#shared/db/entities/webhook-endpoint';
import type { TableRef } from '#shared/db/table-def';
import { isoNow } from '#shared/time';
import { sealSecret } from '#shared/webhooks/secret-box';
import { LOCAL_WEBHOOK_KEY } from './aws-env';

/**
 * The demo merchant seeded on first `npm start`. Its ids and tokens are fixed so that the sample
 * events in events/ work against a fresh local stack. Local use only: never seed it into AWS.
 */
export const DEMO = {
  merchantId: '0d3f5c1e-6a2b-4c8d-9e0f-1a2b3c4d5e6f',
  tokens: {
    live: 'live_DEMO-acme-outdoor-live-token-00000001',
    liveNoOrders: 'live_DEMO-acme-outdoor-no-live-orders-0001',
    sandbox: 'test_DEMO-acme-outdoor-sandbox-token-0001',
  },
  orderUuid: '6b1f0e2a-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
  segmentUuid: '7c2a1f3b-4d5e-4f60-9b8c-1d2e3f4a5b6c',
  pendingRequestUuid: '8d3b2a4c-5e6f-4071-8c9d-2e3f4a5b6c7d',
  secondPendingRequestUuid: '9e4c3b5d-6f70-4182-9d0e-3f4a5b6c7d8e',
  inviteUuid: 'a05d4c6e-7081-4293-8e1f-4a5b6c7d8e9f',
  /** A webhook endpoint pointing at the stage's own webhook inbox (local/webhook-inbox.ts), and its secret. */
  webhookUuid: 'b16e5d7f-8192-43a4-9f20-5b6c7d8e9fa0',
  webhookSecret: 'whsec_RGVtbyB3ZWJob29rIHNlY3JldCwgbG9jYWwgb25seSE=',
} as const;

/** The demo order's first event, delivered once to the demo endpoint (so a resend has something to resend). */
export const DEMO_DELIVERY_EVENT_ID = `evt_${DEMO.orderUuid}_v1`;

/** Seeds the demo merchant (fixture) and its webhook endpoint into a fresh stage table; `port` is the stage's. */
export const seedDemo = async (store: Store, stage: Stage, port: number): Promise<SeedResult> => {
  const seeded = await seedFixture(store, stage, demoFixture(stage));
  await seedDemoWebhook(store, port);
  return seeded;
};

/**
 * Gives the demo merchant its webhook endpoint (at this stage's inbox, every event) and one
 * delivery on record. Not part of the fixture format: an endpoint's secret is sealed, not seeded.
 */
const seedDemoWebhook = async (db: TableRef, port: number) => {
  const now = isoNow();
  const endpoint = {
    uuid: DEMO.webhookUuid,
    url: `http://127.0.0.1:${port}/webhook-inbox/demo`,
    description: 'The local webhook inbox (npm start)',
    events: [],
    enabled: true,
    secret_box: await sealSecret(DEMO.webhookSecret, DEMO.merchantId, DEMO.webhookUuid, LOCAL_WEBHOOK_KEY),
  };
  await putWebhookEndpoint(db, DEMO.merchantId, endpoint, now);
  const event = { id: DEMO_DELIVERY_EVENT_ID, type: 'order.created', timestamp: now, data: { order: { uuid: DEMO.orderUuid } } };
  await recordWebhookDelivery(
    db,
    DEMO.merchantId,
    DEMO.webhookUuid,
    { ...event, json: JSON.stringify(event) },
    {
      attempt: 1,
      at: now,
      status: 'succeeded',
      response_status: 200,
      latency_ms: 3,
      response_body: '{"received":true}',
      error: null,
      next_attempt_at: null,
    },
  );
};

const demoFixture = (stage: Stage): Fixture => ({
  merchants: [
    {
      key: 'demo',
      id: DEMO.merchantId,
      name: 'Acme Outdoor (demo)',
      currency: 'EUR',
      users: [{ email: 'owner@acme.example', name: 'Olivia Owner' }],
      tokens:
        stage === 'live'
          ? [
              { key: 'live', kind: 'live', value: DEMO.tokens.live },
              { key: 'live_no_orders', kind: 'live', can_place_live_orders: false, value: DEMO.tokens.liveNoOrders },
            ]
          : [{ key: 'sandbox', kind: 'testing', value: DEMO.tokens.sandbox }],
      tiers: [
        { slug: 'gold', name: 'Gold', description: 'Top partners' },
        { slug: 'silver', name: 'Silver', description: 'Growing partners' },
      ],
      segments: [
        {
          key: 'default',
          uuid: DEMO.segmentUuid,
          name: 'Default',
          description: 'Everything else',
          default: true,
          rates: { gold: 10, silver: 7.5 },
        },
        {
          key: 'shoes',
          name: 'Shoes',
          description: 'Footwear',
          slugs: ['shoes', 'boots'],
          skus: ['SKU-1'],
          rates: { gold: 12.5, silver: 9 },
        },
      ],
      affiliates: [
        { slug: 'alice', name: 'Alice Adams', email: 'alice@example.com', tier: 'gold', status: 'active' },
        { slug: 'ivan', name: 'Ivan Idle', email: 'ivan@example.com', status: 'inactive' },
      ],
      affiliate_requests: [
        {
          key: 'bob',
          uuid: DEMO.pendingRequestUuid,
          status: 'pending',
          affiliate: { slug: 'bob', name: 'Bob Brown', email: 'bob@example.com' },
        },
        {
          key: 'dora',
          uuid: DEMO.secondPendingRequestUuid,
          status: 'pending',
          affiliate: { slug: 'dora', name: 'Dora Diaz', email: 'dora@example.com' },
        },
      ],
      invites: [{ key: 'used', uuid: DEMO.inviteUuid, email: 'carol@example.com', link_used_at: '2026-10-01T00:00:00Z' }],
      orders: [
        {
          key: 'first',
          uuid: DEMO.orderUuid,
          order_no: 'DEMO-1',
          affiliate_slug: 'alice',
          currency_code: 'EUR',
          total_shipping_value: 495,
          customer: { name: 'Dan Doe', email: 'dan@example.com' },
          order_rows: [{ product_name: 'Tent', product_sku: 'TENT-2P', price_value: 19900, tax_value: 3781, quantity: 1 }],
        },
      ],
    },
  ],
});
