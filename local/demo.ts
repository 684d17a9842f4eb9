import type { Fixture } from '#shared/admin/fixture';
import type { Stage } from '#shared/config';

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
} as const;

export const demoFixture = (stage: Stage): Fixture => ({
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
