import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler as listOrders } from '#functions/orders/list';
import { apiEvent, type EventOptions, expectV2Error, invoke } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';
import { blockItems, blockSk, groupItems, stubCountsPartition } from './support/counts';
import { COUNTS_PK, MERCHANT_KEY, ORDERS_LIST_PK, sha256, storedOrder, stubAuth, TOKENS, TRACE_ID } from './support/fixtures';

const ORDERS_RANGE = '#pk = :pk AND #sk <= :top';
const QUOTA_KEY = { pk: `${MERCHANT_KEY.pk}#QUOTA`, sk: 'QUOTA' };
const COUNTS_QUERY = 'pk = :pk AND sk BETWEEN :from AND :to';

const list = (options: EventOptions = {}) => invoke(listOrders, apiEvent('orders-list', { token: TOKENS.live, ...options }));

const orderOf = (seq: number) => storedOrder({ seq, uuid: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}` });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

/**
 * The merchant's committed orders, by sequence number: the gsi1 list partition answers the
 * key-range Query the way DynamoDB does (sort key <= :top, highest first, at most Limit items);
 * the sequence handed out every number up to the last order's, and each block of 256 of them notes
 * the numbers no order took (its holes), from which its count derives.
 */
const storeOrders = (seqs: number[]) => {
  const last = Math.max(0, ...seqs);
  const blocks: Record<number, number> = {};
  for (const seq of seqs) blocks[Math.floor(seq / 256)] = (blocks[Math.floor(seq / 256)] ?? 0) + 1;
  const used = new Set(seqs);
  const holesOf = (block: number) =>
    new Set(range(Math.max(block * 256, 1), Math.min(last, block * 256 + 255)).filter((seq) => !used.has(seq)));
  stubCountsPartition(COUNTS_PK, () => [
    ...Object.keys(blocks).map((block) => ({ sk: blockSk('orders#all', Number(block)), holes: holesOf(Number(block)), v: 1 })),
    ...groupItems('orders#all', blocks),
  ]);
  ddbMock
    .on(QueryCommand, { ExpressionAttributeValues: { ':pk': QUOTA_KEY.pk } })
    .resolves({ Items: last === 0 ? [] : [{ orders_seq: last, orders_derived_from: 0 }] });
  ddbMock.on(QueryCommand, { KeyConditionExpression: ORDERS_RANGE }).callsFake(async (input: QueryCommandInput) => {
    const top = Number(input.ExpressionAttributeValues?.[':top']);
    const items = seqs
      .filter((seq) => seq <= top)
      .sort((a, b) => b - a)
      .slice(0, input.Limit);
    return { Items: items.map(orderOf) };
  });
};

/**
 * Every table call of one list request, in order: the two of authentication, then the list's own:
 * its newest 64 block counts and its group totals, then one range on gsi1.
 */
const expectedCalls = (top: string, limit: number) => [
  {
    command: 'QueryCommand',
    input: {
      TableName: 'unit-table',
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk',
      ExpressionAttributeValues: { ':pk': `TOKEN#${sha256(TOKENS.live)}`, ':sk': 'TOKEN' },
      Limit: 1,
    },
  },
  { command: 'GetCommand', input: { TableName: 'unit-table', Key: MERCHANT_KEY, ConsistentRead: false } },
  {
    command: 'QueryCommand',
    input: {
      TableName: 'unit-table',
      KeyConditionExpression: COUNTS_QUERY,
      ExpressionAttributeValues: { ':pk': COUNTS_PK, ':from': 'orders#all#00000000', ':to': 'orders#all#99999999' },
      ProjectionExpression: 'sk, n, holes, exact',
      ScanIndexForward: false,
      Limit: 64,
    },
  },
  {
    command: 'QueryCommand',
    input: {
      TableName: 'unit-table',
      KeyConditionExpression: 'pk = :pk AND sk = :sk',
      ExpressionAttributeValues: { ':pk': QUOTA_KEY.pk, ':sk': QUOTA_KEY.sk },
      ProjectionExpression: 'orders_seq, orders_derived_from',
      ConsistentRead: true,
    },
  },
  {
    command: 'QueryCommand',
    input: {
      TableName: 'unit-table',
      KeyConditionExpression: COUNTS_QUERY,
      ExpressionAttributeValues: { ':pk': COUNTS_PK, ':from': 'orders#all#G#00000000', ':to': 'orders#all#G#99999999' },
      ProjectionExpression: 'sk, n',
    },
  },
  {
    command: 'QueryCommand',
    input: {
      TableName: 'unit-table',
      IndexName: 'gsi1',
      KeyConditionExpression: ORDERS_RANGE,
      ExpressionAttributeNames: { '#pk': 'gsi1pk', '#sk': 'gsi1sk' },
      ExpressionAttributeValues: { ':pk': ORDERS_LIST_PK, ':top': top },
      ScanIndexForward: false,
      Limit: limit,
    },
  },
];

const recordedCalls = () => ddbMock.calls().map((call) => ({ command: call.args[0].constructor.name, input: call.args[0].input }));
const orderNos = (body: { data: { orders: { order_no: string }[] } }) => body.data.orders.map((order) => order.order_no);
const indexQueries = () => ddbMock.commandCalls(QueryCommand, { KeyConditionExpression: ORDERS_RANGE });

beforeEach(() => {
  resetAwsMocks();
  stubAuth();
  storeOrders(range(1, 100));
});

describe('GET /api/v2/orders', () => {
  it('reads page 1 with the block counts and ONE Query on gsi1 from the top of the newest block, newest first', async () => {
    // Act
    const response = await list();

    // Assess
    expect(response.statusCode).toBe(200);
    expect(recordedCalls()).toEqual(expectedCalls('000000000255', 15));
    expect(response.body.data.orders).toHaveLength(15);
    expect(orderNos(response.body).slice(0, 3)).toEqual(['A-100', 'A-99', 'A-98']);
    expect(response.body.meta.pagination).toMatchObject({ current_page: 1, last_page: 7, per_page: 15, total: 100 });
  });

  it('reads page 7 with exactly the same calls as page 1, only the limit inside the block differs', async () => {
    // Act
    const response = await list({ query: { page: '7' } });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(recordedCalls()).toEqual(expectedCalls('000000000255', 90 + 15));
    expect(orderNos(response.body)).toEqual(
      range(1, 10)
        .reverse()
        .map((seq) => `A-${seq}`),
    );
  });

  it('finds the block of a later page from the counts alone and, the block being full, starts the Query at the page itself', async () => {
    // Prepare: 600 orders over three blocks (1-255, 256-511, 512-600).
    storeOrders(range(1, 600));

    // Act: page 10 starts at the 136th newest order (offset 135): 89 in block 2, so 46 into block 1,
    // which holds all of 256-511: the page starts at 511 - 46 = 465.
    const response = await list({ query: { page: '10' } });

    // Assess
    expect(recordedCalls()).toEqual(expectedCalls('000000000465', 15));
    expect(orderNos(response.body)).toEqual(
      range(451, 465)
        .reverse()
        .map((seq) => `A-${seq}`),
    );
    expect(response.body.meta.pagination).toMatchObject({ current_page: 10, last_page: 40, total: 600 });
  });

  it('starts at the top of a block with a gap (an unused sequence number) and skips the newer orders of that block', async () => {
    // Prepare: as above, but sequence number 300 was never used (a create lost its order_no race).
    storeOrders(range(1, 600).filter((seq) => seq !== 300));

    // Act: offset 135 is 46 into block 1, which holds 255 orders (the gap lies below the page).
    const response = await list({ query: { page: '10' } });

    // Assess
    expect(recordedCalls()).toEqual(expectedCalls('000000000511', 46 + 15));
    expect(orderNos(response.body)).toEqual(
      range(451, 465)
        .reverse()
        .map((seq) => `A-${seq}`),
    );
    expect(response.body.meta.pagination).toMatchObject({ current_page: 10, last_page: 40, total: 599 });
  });

  it('reads the last page of a large list with the same calls as its first page, and no more items', async () => {
    // Prepare
    storeOrders(range(1, 600));

    // Act
    const first = await list({ query: { per_page: '100' } });
    const callsOfFirst = recordedCalls().map((call) => call.command);
    ddbMock.resetHistory();
    const last = await list({ query: { per_page: '100', page: '6' } });

    // Assess
    expect(recordedCalls().map((call) => call.command)).toEqual(callsOfFirst);
    expect(indexQueries()).toHaveLength(1);
    expect(indexQueries()[0]?.args[0].input).toMatchObject({ ExpressionAttributeValues: { ':top': '000000000100' }, Limit: 100 });
    expect(orderNos(first.body)[0]).toBe('A-600');
    expect(orderNos(last.body)).toEqual(
      range(1, 100)
        .reverse()
        .map((seq) => `A-${seq}`),
    );
  });

  it('honours per_page in the limit', async () => {
    // Act
    const response = await list({ query: { per_page: '25', page: '2' } });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      KeyConditionExpression: ORDERS_RANGE,
      ExpressionAttributeValues: { ':pk': ORDERS_LIST_PK, ':top': '000000000255' },
      Limit: 50,
    });
    expect(orderNos(response.body)).toEqual(
      range(51, 75)
        .reverse()
        .map((seq) => `A-${seq}`),
    );
    expect(response.body.meta.pagination).toMatchObject({ current_page: 2, per_page: 25, last_page: 4, total: 100 });
  });

  it('shows no gap where a sequence number was never committed (a create that lost an order_no race)', async () => {
    // Prepare: 7 and 13 were taken by creates that were then refused, so they were never counted.
    storeOrders(range(1, 20).filter((seq) => seq !== 7 && seq !== 13));

    // Act
    const pages = [];
    for (const page of ['1', '2', '3', '4']) pages.push((await list({ query: { per_page: '5', page } })).body);

    // Assess
    expect(pages.map(orderNos)).toEqual([
      ['A-20', 'A-19', 'A-18', 'A-17', 'A-16'],
      ['A-15', 'A-14', 'A-12', 'A-11', 'A-10'],
      ['A-9', 'A-8', 'A-6', 'A-5', 'A-4'],
      ['A-3', 'A-2', 'A-1'],
    ]);
    expect(pages.map((body) => body.meta.pagination.total)).toEqual([18, 18, 18, 18]);
    expect(pages[0].meta.pagination.last_page).toBe(4);
  });

  it('answers an empty page past the end without querying the index', async () => {
    // Act
    const response = await list({ query: { page: '8' } });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.orders).toEqual([]);
    expect(indexQueries()).toHaveLength(0);
    expect(response.body.meta.pagination).toMatchObject({ current_page: 8, last_page: 7, next_page_url: null });
  });

  it('lists nothing for a merchant without orders, with one page and no links', async () => {
    // Prepare
    storeOrders([]);

    // Act
    const response = await list();

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body).toEqual({
      success: true,
      data: { orders: [] },
      errors: null,
      meta: {
        pagination: { current_page: 1, last_page: 1, per_page: 15, total: 0, next_page_url: null, prev_page_url: null },
        trace_id: expect.stringMatching(TRACE_ID),
      },
    });
    expect(indexQueries()).toHaveLength(0);
  });

  it('presents each order with its currency, rows, customer and cancelled_at', async () => {
    // Act
    const response = await list({ query: { per_page: '1' } });

    // Assess
    expect(response.body.data.orders).toEqual([
      {
        uuid: '00000000-0000-4000-8000-000000000100',
        order_no: 'A-100',
        affiliate_slug: 'alice',
        total_shipping_value: 495,
        currency: { code: 'EUR', name: 'Euro' },
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
        cancelled_at: null,
        created_at: '2026-03-01T10:00:00.000Z',
        updated_at: '2026-03-01T10:00:00.000Z',
      },
    ]);
    // Storage details stay inside.
    expect(JSON.stringify(response.body)).not.toMatch(/gsi1|"pk"|"seq"|"type"/);
  });

  it('builds Laravel pagination links from Host, X-Forwarded-Proto and the stage path, keeping other query fields', async () => {
    // Act
    const response = await list({
      query: { per_page: '15', page: '3' },
      headers: { Host: 'merchant-api.example.com', 'X-Forwarded-Proto': 'https' },
    });

    // Assess
    expect(response.body.meta.pagination).toEqual({
      current_page: 3,
      last_page: 7,
      per_page: 15,
      total: 100,
      next_page_url: 'https://merchant-api.example.com/live/api/v2/orders?per_page=15&page=4',
      prev_page_url: 'https://merchant-api.example.com/live/api/v2/orders?per_page=15&page=2',
    });
  });

  it('reads the forwarding headers in any casing', async () => {
    // Act
    const response = await list({
      headers: { host: 'localhost:3000', 'x-forwarded-proto': 'http' },
    });

    // Assess
    expect(response.body.meta.pagination.next_page_url).toBe('http://localhost:3000/live/api/v2/orders?page=2');
    expect(response.body.meta.pagination.prev_page_url).toBeNull();
  });

  it.each([
    [{ per_page: '0' }, { per_page: ['The per page field must be at least 1.'] }],
    [{ per_page: '101' }, { per_page: ['The per page field must not be greater than 100.'] }],
    [{ page: '1.5' }, { page: ['The page field must be an integer.'] }],
    [{ page: 'abc' }, { page: ['The page field must be an integer.'] }],
  ])('answers 422 keyed by field for query %o without listing', async (query, errors) => {
    // Act
    const response = await list({ query });

    // Assess
    expectV2Error(response, 422, errors);
    expect(ddbMock).not.toHaveReceivedCommandWith(QueryCommand, { KeyConditionExpression: COUNTS_QUERY });
    expect(indexQueries()).toHaveLength(0);
  });

  it('continues the key-range Query past a 1 MB page so a page of large orders is never short', async () => {
    // Prepare: the index stops after 10 of the 15 orders of page 1, as DynamoDB does at 1 MB
    const page = range(86, 100).reverse().map(orderOf);
    ddbMock
      .on(QueryCommand, { KeyConditionExpression: ORDERS_RANGE })
      .resolvesOnce({ Items: page.slice(0, 10), LastEvaluatedKey: { pk: 'x', sk: 'y' } })
      .resolvesOnce({ Items: page.slice(10) });

    // Act
    const response = await list();

    // Assess
    expect(response.body.data.orders).toHaveLength(15);
    expect(indexQueries()).toHaveLength(2);
    expect(indexQueries()[1]?.args[0].input).toMatchObject({ ExclusiveStartKey: { pk: 'x', sk: 'y' }, Limit: 5 });
  });

  it('continues the group-total Query past a 1 MB page so the total is exact', async () => {
    // Prepare: groups 0 and 1 (blocks 0-127) full and counted by their totals; group 2 (blocks
    // 128-191) full and counted from its blocks; DynamoDB answering one item per response.
    const newestGroup = Object.fromEntries(range(128, 191).map((block) => [block, 256]));
    const items = [
      ...blockItems('orders#all', newestGroup),
      { sk: 'orders#all#G#00000000', n: 16_383 },
      { sk: 'orders#all#G#00000001', n: 16_384 },
    ];
    stubCountsPartition(COUNTS_PK, () => items, 1);
    // Counted by ADD: a sequence started before derived counts.
    ddbMock.on(QueryCommand, { ExpressionAttributeValues: { ':pk': QUOTA_KEY.pk } }).resolves({ Items: [{ orders_seq: 49_151 }] });

    // Act
    const response = await list();

    // Assess
    expect(response.body.meta.pagination.total).toBe(16_383 + 16_384 + 64 * 256);
    const groupQueries = ddbMock.commandCalls(QueryCommand, { ExpressionAttributeValues: { ':from': 'orders#all#G#00000000' } });
    expect(groupQueries).toHaveLength(2);
    expect(groupQueries[1]?.args[0].input.ExclusiveStartKey).toEqual({ pk: COUNTS_PK, sk: 'orders#all#G#00000000' });
  });

  it('treats an empty per_page or page as not given (Laravel turns "" into null)', async () => {
    // Act
    const response = await list({ query: { per_page: '', page: '' } });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.meta.pagination).toMatchObject({ per_page: 15, current_page: 1 });
  });
});

describe('GET /api/v2/orders at the largest orders', () => {
  it('answers 422 naming per_page, never a 5xx, when a page is too large for one answer, and the page with fewer per_page', async () => {
    // Prepare: 40 orders of 200 rows, each name and SKU 255 quotes (which JSON escapes twice on the way out)
    const big = (seq: number) => {
      const order = orderOf(seq);
      const row = { ...order.order_rows[0], product_sku: '"'.repeat(255), product_name: '"'.repeat(255) };
      return { ...order, order_rows: Array.from({ length: 200 }, () => row) };
    };
    storeOrders(range(1, 40));
    ddbMock
      .on(QueryCommand, { KeyConditionExpression: ORDERS_RANGE })
      .callsFake(async (input: QueryCommandInput) => ({ Items: range(1, 40).reverse().slice(0, input.Limit).map(big) }));

    // Act
    const tooLarge = await list({ query: { per_page: '40' } });
    const fits = await list({ query: { per_page: '5' } });

    // Assess
    expectV2Error(tooLarge, 422, { per_page: ['The page is too large to send: ask for fewer items per page.'] });
    expect(fits.statusCode).toBe(200);
    expect(fits.body.data.orders).toHaveLength(5);
  });
});
