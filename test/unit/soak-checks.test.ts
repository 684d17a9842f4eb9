import { describe, expect, it } from 'vitest';
import { checkAsync } from '#test/soak/async-checks';
import type { SoakMerchant } from '#test/soak/fixtures';
import type { Op } from '#test/soak/ops';
import type { MerchantTruth } from '#test/soak/truth';

const merchant = { key: 'l1', stage: 'live', seededOrders: [] } as unknown as SoakMerchant;
const body = {
  order_no: 'A-\u{1F600}-1',
  affiliate_slug: 'alice',
  total_shipping_value: 0,
  currency_code: 'EUR',
  customer: { name: 'Ünïcode \u{FFFF}', email: 'dan@example.com' },
  order_rows: [{ product_name: 'Zelt \u{FFFE}', product_sku: 'TENT', price_value: 100, tax_value: 0, quantity: 1 }],
};

/** An unkeyed create with an odd text: its first attempt answered 502 (applied, the function stopped), the retry 422 taken. */
const retriedCreate = (): Op =>
  ({
    id: 1,
    kind: 'create-v2',
    merchant,
    text: 'mixed',
    expect: 201,
    request: { url: 'http://127.0.0.1', token: 't', method: 'POST', path: '/api/v2/orders/create', body: JSON.stringify(body) },
    attempts: [
      { status: 502, body: '' },
      { status: 422, body: JSON.stringify({ errors: { order_no: ['The order no has already been taken.'] } }) },
    ],
  }) as unknown as Op;

const storedOrder = (productName: string) => ({
  uuid: '0b7e7a4c-1d2e-4f30-8a41-5b6c7d8e9f00',
  version: 1,
  status: 'pending',
  order_no: body.order_no,
  customer: { name: body.customer.name, email: body.customer.email },
  order_rows: [{ product_name: productName, product_sku: 'TENT', segment_slug: null }],
});

const textsCheck = (orders: unknown[]) =>
  checkAsync({
    ops: [retriedCreate()],
    truths: [
      {
        merchant,
        orders,
        ledgers: new Map(),
        requests: [],
        invites: [],
        affiliates: [],
        segments: [],
        lists: [],
      } as unknown as MerchantTruth,
    ],
    endpoints: [],
    states: new Map(),
    scheduleAttempts: 7,
    maxLagSeconds: 15,
  }).invariants.find((invariant) => invariant.id === 'texts');

describe('the soak: odd and largest texts', () => {
  it("takes an unkeyed retry's 422 after an applied attempt for the spec's answer when the order it created holds the texts sent", () => {
    // Act
    const held = textsCheck([storedOrder(body.order_rows[0]?.product_name ?? '')]);
    const changed = textsCheck([storedOrder('Zelt')]);

    // Assess
    expect(held?.violations).toEqual([]);
    expect(changed?.violations).toEqual([expect.stringContaining('stored texts differ from those sent')]);
  });
});
