import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../functions/commissions/process';
import { computeCommission, parseOrderAccepted, recordOrderCommission, segmentForRow } from '../../shared/domain/commissions';
import type { OrderItem } from '../../shared/db/entities/order';
import type { SegmentItem } from '../../shared/domain/program-model';
import { lambdaContext } from './support/api';
import { ddbMock, resetAwsMocks, sqsMock } from './support/aws';
import { storedAffiliate } from './support/fixtures';

const MERCHANT = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';
const ORDER = '00000000-0000-4000-8000-00000000000a';

const SEGMENTS: Pick<SegmentItem, 'uuid' | 'slugs' | 'rates' | 'is_default'>[] = [
  { uuid: 'seg-default', slugs: [], rates: { gold: 10, silver: 5 }, is_default: true },
  { uuid: 'seg-shoes', slugs: ['shoes', 'Boots'], rates: { gold: 12.5 }, is_default: false },
];

/** The segments as the table stores them (the commission reads them with one Query). */
const storedSegments = SEGMENTS.map((segment) => ({
  pk: `M#${MERCHANT}`,
  sk: `SEGMENT#${segment.uuid}`,
  type: 'segment',
  name: segment.uuid,
  description: '',
  segment_type: 'percentage',
  skus: [],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  ...segment,
}));
const AFFILIATE = { Item: storedAffiliate({ pk: `M#${MERCHANT}`, tier_slug: 'gold' }) };

const order = (overrides: Partial<OrderItem> = {}): OrderItem => ({
  uuid: ORDER,
  seq: 1,
  order_no: 'A-1',
  affiliate_slug: 'alice',
  total_shipping_value: 495,
  currency_code: 'EUR',
  order_rows: [
    { uuid: 'row-1', product_sku: null, product_name: 'Boots', segment_slug: 'boots', price_value: 10000, tax_value: 1900, quantity: 2 },
    { uuid: 'row-2', product_sku: null, product_name: 'Tent', segment_slug: null, price_value: 19999, tax_value: null, quantity: 1 },
  ],
  customer: null,
  created_at: '2026-03-10T08:00:00.000Z',
  updated_at: '2026-03-10T08:00:00.000Z',
  ...overrides,
});

describe('segmentForRow', () => {
  it('matches a segment slug case-insensitively, else falls back to the default segment', () => {
    expect(segmentForRow(SEGMENTS, 'BOOTS')?.uuid).toBe('seg-shoes');
    expect(segmentForRow(SEGMENTS, 'hats')?.uuid).toBe('seg-default');
    expect(segmentForRow(SEGMENTS, null)?.uuid).toBe('seg-default');
    expect(segmentForRow([], 'boots')).toBeUndefined();
  });
});

describe('computeCommission', () => {
  it('pays each row its segment rate for the affiliate tier, rounded to the minor unit; no commission on shipping or tax', () => {
    const commission = computeCommission(order(), SEGMENTS, { tier_slug: 'gold' }, '2026-03-10T09:00:00.000Z');
    expect(commission.rows).toEqual([
      { row_uuid: 'row-1', segment_uuid: 'seg-shoes', rate: 12.5, base_value: 20000, amount: 2500 },
      { row_uuid: 'row-2', segment_uuid: 'seg-default', rate: 10, base_value: 19999, amount: 2000 },
    ]);
    expect(commission).toMatchObject({ total_amount: 4500, status: 'pending', tier_slug: 'gold', currency_code: 'EUR', created_at: '2026-03-10T09:00:00.000Z' });
  });

  it('pays 0 for a tier the segment has no rate for, or an affiliate without a tier', () => {
    expect(computeCommission(order(), SEGMENTS, { tier_slug: 'silver' }).rows.map((row) => row.amount)).toEqual([0, 1000]);
    expect(computeCommission(order(), SEGMENTS, { tier_slug: null }).total_amount).toBe(0);
    expect(computeCommission(order(), SEGMENTS, undefined).tier_slug).toBeNull();
  });

  it('voids a cancelled order', () => {
    expect(computeCommission(order({ cancelled_at: '2026-03-10T08:30:00.000Z' }), SEGMENTS, { tier_slug: 'gold' })).toMatchObject({ status: 'void', total_amount: 0 });
  });
});

describe('parseOrderAccepted', () => {
  it('accepts only a well-formed order.accepted message', () => {
    expect(parseOrderAccepted(JSON.stringify({ type: 'order.accepted', merchant_id: MERCHANT, order_uuid: ORDER, extra: 1 }))).toEqual({
      type: 'order.accepted',
      merchant_id: MERCHANT,
      order_uuid: ORDER,
    });
    for (const body of ['not json', 'null', '[]', JSON.stringify({ type: 'order.cancelled', merchant_id: MERCHANT, order_uuid: ORDER }), JSON.stringify({ type: 'order.accepted', merchant_id: MERCHANT })]) {
      expect(parseOrderAccepted(body), body).toBeUndefined();
    }
  });
});

describe('recordOrderCommission', () => {
  beforeEach(() => {
    // Prepare
    resetAwsMocks();
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: `ORDER#${ORDER}` } }).resolves({ Item: order() });
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: 'AFFILIATE#alice' } }).resolves(AFFILIATE);
    ddbMock.on(QueryCommand).resolves({ Items: storedSegments });
  });

  it('writes the record with a condition that it does not exist yet', async () => {
    // Act
    const { outcome } = await recordOrderCommission(MERCHANT, ORDER);

    // Assess
    expect(outcome).toBe('recorded');
    expect(ddbMock).toHaveReceivedCommandWith(PutCommand, {
      Item: expect.objectContaining({ pk: `M#${MERCHANT}`, sk: `COMMISSION#${ORDER}`, type: 'commission', total_amount: 4500 }),
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  });

  it('reports a record that already exists as a duplicate, not an error', async () => {
    ddbMock.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    expect((await recordOrderCommission(MERCHANT, ORDER)).outcome).toBe('duplicate');
  });

  it('fails for an order that does not exist', async () => {
    await expect(recordOrderCommission(MERCHANT, '00000000-0000-4000-8000-0000000000ff')).rejects.toThrow(/does not exist/);
  });
});

const DLQ_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders-dlq';
const record = (messageId: string, body: string) => ({ messageId, body, receiptHandle: messageId, attributes: { ApproximateReceiveCount: '1' } });
const accepted = (orderUuid: string) => JSON.stringify({ type: 'order.accepted', merchant_id: MERCHANT, order_uuid: orderUuid });
const UNKNOWN_ORDER = '00000000-0000-4000-8000-0000000000ff';
const POISON_ORDER = '00000000-0000-4000-8000-0000000000ee';

describe('the consumer handler', () => {
  beforeEach(() => {
    resetAwsMocks();
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: `ORDER#${ORDER}` } }).resolves({ Item: order() });
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: `ORDER#${POISON_ORDER}` } }).resolves({
      Item: order({ uuid: POISON_ORDER, order_rows: [{ uuid: 'row-1', product_sku: null, product_name: 'Tent', segment_slug: null, price_value: 19900, tax_value: null, quantity: Number.MAX_SAFE_INTEGER }] }),
    });
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: 'AFFILIATE#alice' } }).resolves(AFFILIATE);
    ddbMock.on(QueryCommand).resolves({ Items: storedSegments });
    ddbMock.on(PutCommand).resolves({});
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'dlq-1' });
  });

  it('moves messages that can never succeed to the DLQ at once, with the reason, and acknowledges them', async () => {
    // Prepare
    const event = { Records: [record('good', accepted(ORDER)), record('malformed', '{'), record('unknown-order', accepted(UNKNOWN_ORDER)), record('poison', accepted(POISON_ORDER))] };

    // Act
    const response = await handler(event as never, lambdaContext('commissions-process'));

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const sent = sqsMock.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(sent.map((input) => input.QueueUrl)).toEqual([DLQ_URL, DLQ_URL, DLQ_URL]);
    const byId = Object.fromEntries(sent.map((input) => [input.MessageAttributes?.original_message_id?.StringValue, input]));
    expect(byId.malformed).toMatchObject({
      MessageBody: '{',
      MessageAttributes: {
        dead_letter_reason: { DataType: 'String', StringValue: 'Not an order.accepted message' },
        dead_letter_error: { DataType: 'String', StringValue: 'UnprocessableMessageError' },
        dead_letter_source: { DataType: 'String', StringValue: 'commissions-process' },
        original_receive_count: { DataType: 'String', StringValue: '1' },
      },
    });
    expect(byId['unknown-order']?.MessageAttributes?.dead_letter_reason?.StringValue).toBe(`Order ${UNKNOWN_ORDER} does not exist`);
    expect(byId.poison?.MessageAttributes?.dead_letter_error?.StringValue).toBe('AmountNotComputableError');
    expect(byId.poison?.MessageAttributes?.dead_letter_reason?.StringValue).toMatch(/quantity 9007199254740991|exceeds 2\^53/);
    // Only the good order got a commission record.
    expect(ddbMock.commandCalls(PutCommand).map((call) => call.args[0].input.Item?.order_uuid)).toEqual([ORDER]);
  });

  it('reports a transient failure for redelivery and sends nothing to the DLQ', async () => {
    // Prepare
    ddbMock.on(PutCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ProvisionedThroughputExceededException' }));

    // Act
    const response = await handler({ Records: [record('throttled', accepted(ORDER))] } as never, lambdaContext('commissions-process'));

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'throttled' }] });
    expect(sqsMock).not.toHaveReceivedCommand(SendMessageCommand);
  });

  it('reports a permanent failure for redelivery when the DLQ refuses it, so it is never lost', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).rejects(Object.assign(new Error('timed out'), { name: 'TimeoutError' }));

    // Act
    const response = await handler({ Records: [record('good', accepted(ORDER)), record('malformed', 'not json')] } as never, lambdaContext('commissions-process'));

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'malformed' }] });
  });
});
