/**
 * A merchant, its tokens and orders as they sit in the single table, and a stub of the two reads
 * authentication makes (Query gsi1 by token hash, GetItem of the merchant).
 * Keys are written out literally on purpose: the tests check the key layout, not reuse it.
 */
import { createHash } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, type QueryCommandInput, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddbMock } from './aws';
import { blockItems, groupItems, stubCountsPartition } from './counts';

export const MERCHANT = { id: '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b', name: 'Acme Outdoor', currency: 'EUR' } as const;
export const OTHER_MERCHANT_ID = 'a0a0a0a0-b1b1-4c2c-8d3d-e4e4e4e4e4e4';
export const MERCHANT_PK = `M#${MERCHANT.id}`;
export const MERCHANT_KEY = { pk: MERCHANT_PK, sk: 'MERCHANT' };

/** Token strings: a kind prefix and 40 URL-safe characters. */
export const TOKENS = {
  live: 'live_Qx7Lr2mK9vT4pZ8nB3cW6yH1jF5dS0aGeUoXiRkM',
  noLiveOrders: 'live_N0rd3rsN0rd3rsN0rd3rsN0rd3rsN0rd3rsN0',
  revoked: 'live_R3v0k3dR3v0k3dR3v0k3dR3v0k3dR3v0k3dR3v',
  unknown: 'live_Unkn0wnUnkn0wnUnkn0wnUnkn0wnUnkn0wnUn',
  orphan: 'live_0rphan0rphan0rphan0rphan0rphan0rphan0',
  testing: 'test_T3stT3stT3stT3stT3stT3stT3stT3stT3stT3',
} as const;

/** SHA-256 hex, computed here independently of the production helper. */
export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export type TokenStub = { token: string; merchantId?: string; kind?: 'live' | 'testing'; canPlaceLiveOrders?: boolean; revokedAt?: string };

export const DEFAULT_TOKENS: TokenStub[] = [
  { token: TOKENS.live },
  { token: TOKENS.noLiveOrders, canPlaceLiveOrders: false },
  { token: TOKENS.revoked, revokedAt: '2026-01-01T00:00:00.000Z' },
  { token: TOKENS.orphan, merchantId: OTHER_MERCHANT_ID },
  { token: TOKENS.testing, kind: 'testing' },
];

export const TOKEN_LOOKUP_CONDITION = 'gsi1pk = :pk AND gsi1sk = :sk';

/**
 * Stubs the reads of authentication (call it first: later, more specific stubs win). `defaultTier`
 * is the merchant item's default tier (absent when undefined).
 */
export const stubAuth = (options: { tokens?: TokenStub[]; defaultTier?: string } = {}) => {
  const byPk = new Map(
    (options.tokens ?? DEFAULT_TOKENS).map((stub) => [
      `TOKEN#${sha256(stub.token)}`,
      {
        pk: `M#${stub.merchantId ?? MERCHANT.id}`,
        sk: `TOKEN#${sha256(stub.token)}`,
        gsi1pk: `TOKEN#${sha256(stub.token)}`,
        gsi1sk: 'TOKEN',
        merchant_id: stub.merchantId ?? MERCHANT.id,
        kind: stub.kind ?? (stub.token.startsWith('test_') ? 'testing' : 'live'),
        can_place_live_orders: stub.canPlaceLiveOrders ?? true,
        created_at: '2025-06-01T00:00:00.000Z',
        ...(stub.revokedAt ? { revoked_at: stub.revokedAt } : {}),
      },
    ]),
  );
  // Anything not stubbed more specifically reads as missing, the way DynamoDB answers.
  ddbMock.on(GetCommand).resolves({});
  ddbMock.on(QueryCommand).resolves({ Items: [], Count: 0 });
  ddbMock.on(QueryCommand, { KeyConditionExpression: TOKEN_LOOKUP_CONDITION }).callsFake(async (input: QueryCommandInput) => {
    const item = byPk.get(String(input.ExpressionAttributeValues?.[':pk']));
    return { Items: item ? [item] : [], Count: item ? 1 : 0 };
  });
  stubMerchantItem(options.defaultTier);
};

/** The merchant item (only MERCHANT exists; any other merchant id reads as missing). */
export const stubMerchantItem = (defaultTier?: string) => {
  ddbMock.on(GetCommand, { Key: MERCHANT_KEY }).resolves({
    Item: {
      ...MERCHANT_KEY,
      type: 'merchant',
      name: MERCHANT.name,
      currency: MERCHANT.currency,
      ...(defaultTier === undefined ? {} : { default_tier: defaultTier }),
    },
  });
};

export type OrderCreateBody = {
  affiliate_slug: string;
  order_no: string;
  total_shipping_value: number;
  currency_code: string;
  customer?: { name?: string | null; email: string } | null;
  order_rows: Record<string, unknown>[];
};

export const orderBody = (overrides: Partial<OrderCreateBody> = {}): OrderCreateBody => ({
  affiliate_slug: 'alice',
  order_no: 'A-1001',
  total_shipping_value: 495,
  currency_code: 'EUR',
  customer: { name: 'Dan Customer', email: 'Dan@Example.com' },
  order_rows: [
    { product_sku: 'TENT-2P', product_name: 'Tent', segment_slug: 'outdoor', price_value: 19900, tax_value: 3781, quantity: 1 },
    { product_name: 'Tent pegs', price_value: 500, quantity: 4 },
  ],
  ...overrides,
});

/** The order list's index partition on gsi1 and its block counts (one item per 256 sequence numbers). */
export const ORDERS_LIST_PK = `${MERCHANT_PK}#orders#all`;
export const COUNTS_PK = `${MERCHANT_PK}#COUNTS`;
/** The merchant's order sequence: `orders_seq` on its quota item (atomic ADD, never in a transaction). */
export const ORDER_SEQUENCE_KEY = { pk: `${MERCHANT_PK}#QUOTA`, sk: 'QUOTA' };
/** The orders' older sequence counter, which numbered the orders before the quota item did. */
export const ORDER_COUNTER_KEY = { pk: MERCHANT_PK, sk: 'COUNTER#orders' };
export const AFFILIATE_KEY = { pk: MERCHANT_PK, sk: 'AFFILIATE#alice' };

/** An affiliate item as the table stores it (listed in `all` on gsi1 and under its tier on gsi3). */
export const storedAffiliate = (overrides: Record<string, unknown> = {}) => {
  const slug = (overrides.slug as string | undefined) ?? 'alice';
  const seq = (overrides.seq as number | undefined) ?? 1;
  return {
    pk: MERCHANT_PK,
    sk: `AFFILIATE#${slug}`,
    gsi1pk: `${MERCHANT_PK}#affiliates#all`,
    gsi1sk: String(seq).padStart(12, '0'),
    gsi3pk: `${MERCHANT_PK}#affiliates#tier%3Agold`,
    gsi3sk: String(seq).padStart(12, '0'),
    type: 'affiliate',
    slug,
    seq,
    name: 'Alice',
    email: `${slug}@example.com`,
    status: 'active',
    tier_slug: 'gold',
    accepted_at: '2026-01-01T00:00:00.000Z',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
};

/** Matches the PutItem of an order (a create's one write), whatever else a test puts. */
export const ORDER_PUT = { Item: { type: 'order' } };

/** The PutItem calls of orders, in order. */
export const orderPuts = () => ddbMock.commandCalls(PutCommand).filter((call) => call.args[0].input.Item?.type === 'order');

/** The uuid a merchant's order with `orderNo` is stored under: derived from both (spelled out here: name-based, SHA-256). */
export const derivedOrderUuid = (orderNo: string, merchantId: string = MERCHANT.id) => {
  const hash = createHash('sha256').update(`${merchantId}\u0000order_no\u0000${orderNo}`).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/**
 * Stubs what an order create reads and writes besides authentication: the affiliate `alice`
 * (active unless given), the order sequence (its ADD hands back `seq`), and success for the order's
 * put and every other UpdateItem (block count, recount mark).
 */
export const stubOrderCreate = (options: { seq?: number; derivedFrom?: number; affiliate?: Record<string, unknown> | null } = {}) => {
  ddbMock
    .on(GetCommand, { Key: AFFILIATE_KEY })
    .resolves(options.affiliate === null ? {} : { Item: options.affiliate ?? storedAffiliate() });
  ddbMock.on(PutCommand, ORDER_PUT).resolves({});
  ddbMock.on(UpdateCommand).resolves({});
  stubOrderSequence(options.seq, 'derivedFrom' in options ? { derivedFrom: options.derivedFrom } : undefined);
};

/**
 * The order sequence's ADD hands back `seq` (again after a test stubs every UpdateItem), on a sequence
 * whose block counts derive from it from `derivedFrom` on (none: a sequence started before derived counts).
 */
export const stubOrderSequence = (seq = 42, { derivedFrom }: { derivedFrom?: number } = { derivedFrom: 0 }) =>
  ddbMock
    .on(UpdateCommand, { Key: ORDER_SEQUENCE_KEY })
    .resolves({ Attributes: { orders_seq: seq, ...(derivedFrom === undefined ? {} : { orders_derived_from: derivedFrom }) } });

/**
 * Stubs the counts of one list bucket (Queries on the merchant's COUNTS partition, support/counts.ts):
 * `blocks` maps a block number (sequence number / 256) to how many items of the bucket it holds;
 * the group totals (64 blocks each) are what a refresh would have written from them.
 */
export const stubBlockCounts = (listBucket: string, blocks: Record<number, number>) => {
  const items = [...blockItems(listBucket, blocks), ...groupItems(listBucket, blocks)];
  stubCountsPartition(COUNTS_PK, () => items);
};

export const ORDER_UUID = '3e0b6d2c-5a1f-4c8e-9b7d-2f4a6c8e0b1d';

/** An order item as the table stores it (keys, index attributes and the order itself). */
export const storedOrder = (overrides: Record<string, unknown> = {}) => {
  const uuid = (overrides.uuid as string | undefined) ?? ORDER_UUID;
  const seq = (overrides.seq as number | undefined) ?? 1;
  return {
    pk: MERCHANT_PK,
    sk: `ORDER#${uuid}`,
    gsi1pk: ORDERS_LIST_PK,
    gsi1sk: String(seq).padStart(12, '0'),
    type: 'order',
    uuid,
    seq,
    order_no: `A-${seq}`,
    affiliate_slug: 'alice',
    total_shipping_value: 495,
    currency_code: 'EUR',
    order_rows: [
      {
        uuid: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a',
        product_sku: 'TENT-2P',
        product_name: 'Tent',
        segment_slug: null,
        price_value: 19900,
        tax_value: null,
        quantity: 1,
      },
    ],
    customer: { name: 'Dan Customer', email: 'dan@example.com' },
    created_at: '2026-03-01T10:00:00.000Z',
    updated_at: '2026-03-01T10:00:00.000Z',
    ...overrides,
  };
};

export const REQUEST_UUID = '8d3b2a4c-5e6f-4071-8c9d-2e3f4a5b6c7d';
export const REQUEST_KEY = { pk: MERCHANT_PK, sk: `AREQ#${REQUEST_UUID}` };

/** A pending affiliate request as the table stores it. */
export const storedPendingRequest = (overrides: Record<string, unknown> = {}) => ({
  ...REQUEST_KEY,
  gsi1pk: `${MERCHANT_PK}#affiliate_requests#pending`,
  gsi1sk: '000000000004',
  type: 'affiliate_request',
  uuid: REQUEST_UUID,
  seq: 4,
  status: 'pending',
  affiliate: { slug: 'bob', name: 'Bob', email: 'bob@example.com' },
  requested_at: '2026-03-01T10:00:00.000Z',
  decided_at: null,
  updated_at: '2026-03-01T10:00:00.000Z',
  ...overrides,
});

export { TRACE_ID } from './trace-id';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
