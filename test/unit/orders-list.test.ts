import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler as listOrders } from '../../functions/orders/list';
import { apiEvent, invoke, type EventOptions } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT_KEY, MERCHANT_PK, sha256, storedOrder, stubAuth, TOKENS, TRACE_ID } from './support/fixtures';

const ORDERS_RANGE = 'gsi1pk = :pk AND gsi1sk BETWEEN :oldest AND :newest';

const list = (options: EventOptions = {}) => invoke(listOrders, apiEvent('orders-list', { token: TOKENS.live, ...options }));

/** A page of stored orders, newest first, as the index returns them. */
const ordersBetween = (oldest: number, newest: number) =>
  Array.from({ length: newest - oldest + 1 }, (_, index) => {
    const seq = newest - index;
    return storedOrder({ seq, uuid: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}` });
  });

/** Every table call of one list request, in order: the two of authentication, then the list's own. */
const expectedCalls = (oldest: string, newest: string) => [
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
  { command: 'GetCommand', input: { TableName: 'unit-table', Key: MERCHANT_KEY } },
  { command: 'GetCommand', input: { TableName: 'unit-table', Key: MERCHANT_KEY, ProjectionExpression: 'orders_count', ConsistentRead: true } },
  {
    command: 'QueryCommand',
    input: {
      TableName: 'unit-table',
      IndexName: 'gsi1',
      KeyConditionExpression: ORDERS_RANGE,
      ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#ORDERS`, ':oldest': oldest, ':newest': newest },
      ScanIndexForward: false,
    },
  },
];

const recordedCalls = () => ddbMock.calls().map((call) => ({ command: call.args[0].constructor.name, input: call.args[0].input }));

beforeEach(() => {
  resetAwsMocks();
  stubAuth({ ordersCount: 100 });
  ddbMock.on(QueryCommand, { KeyConditionExpression: ORDERS_RANGE }).callsFake(async (input) => {
    const values = input.ExpressionAttributeValues as Record<string, string>;
    return { Items: ordersBetween(Number(values[':oldest']), Number(values[':newest'])) };
  });
});

describe('GET /api/v2/orders', () => {
  it('reads page 1 with the order counter and ONE key-range Query on gsi1, newest first', async () => {
    // Act
    const response = await list();

    // Assess
    expect(response.statusCode).toBe(200);
    expect(recordedCalls()).toEqual(expectedCalls('000000000086', '000000000100'));
    expect(response.body.data.orders).toHaveLength(15);
    expect(response.body.data.orders.map((order: { order_no: string }) => order.order_no).slice(0, 3)).toEqual(['A-100', 'A-99', 'A-98']);
  });

  it('reads page 7 with a different key range but exactly the same calls as page 1', async () => {
    // Act
    const response = await list({ query: { page: '7' } });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(recordedCalls()).toEqual(expectedCalls('000000000001', '000000000010'));
    expect(response.body.data.orders).toHaveLength(10);
    expect(response.body.data.orders.at(-1).order_no).toBe('A-1');
  });

  it('honours per_page in the key range', async () => {
    // Act
    const response = await list({ query: { per_page: '25', page: '2' } });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      KeyConditionExpression: ORDERS_RANGE,
      ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#ORDERS`, ':oldest': '000000000051', ':newest': '000000000075' },
    });
    expect(response.body.meta.pagination).toMatchObject({ current_page: 2, per_page: 25, last_page: 4, total: 100 });
  });

  it('answers an empty page past the end without querying the index', async () => {
    // Act
    const response = await list({ query: { page: '8' } });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.data.orders).toEqual([]);
    expect(ddbMock.commandCalls(QueryCommand, { KeyConditionExpression: ORDERS_RANGE })).toHaveLength(0);
    expect(response.body.meta.pagination).toMatchObject({ current_page: 8, last_page: 7, next_page_url: null });
  });

  it('lists nothing for a merchant without orders, with one page and no links', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: MERCHANT_KEY }).resolves({ Item: { ...MERCHANT_KEY, name: 'Acme Outdoor', currency: 'EUR' } });

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
          { uuid: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a', product_sku: 'TENT-2P', product_name: 'Tent', segment_slug: null, price_value: 19900, tax_value: null, quantity: 1 },
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
    expect(response.statusCode).toBe(422);
    expect(response.body.errors).toEqual(errors);
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { ProjectionExpression: 'orders_count' });
  });

  it('continues the key-range Query past a 1 MB page so a page of large orders is never short', async () => {
    // Prepare: the index stops after 10 of the 15 orders of page 1, as DynamoDB does at 1 MB
    const page = ordersBetween(86, 100);
    ddbMock
      .on(QueryCommand, { KeyConditionExpression: ORDERS_RANGE })
      .resolvesOnce({ Items: page.slice(0, 10), LastEvaluatedKey: { pk: 'x', sk: 'y' } })
      .resolvesOnce({ Items: page.slice(10) });

    // Act
    const response = await list();

    // Assess
    expect(response.body.data.orders).toHaveLength(15);
    const rangeQueries = ddbMock.commandCalls(QueryCommand, { KeyConditionExpression: ORDERS_RANGE });
    expect(rangeQueries).toHaveLength(2);
    expect(rangeQueries[1]?.args[0].input.ExclusiveStartKey).toEqual({ pk: 'x', sk: 'y' });
  });

  it('treats an empty per_page or page as not given (Laravel turns "" into null)', async () => {
    // Act
    const response = await list({ query: { per_page: '', page: '' } });

    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.body.meta.pagination).toMatchObject({ per_page: 15, current_page: 1 });
  });
});
