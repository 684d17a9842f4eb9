import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler } from '#functions/commissions/process';
import type { OrderItem } from '#shared/db/entities/order';
import type { SegmentItem } from '#shared/db/entities/segment';
import { advanceLedger, applyOrderChanges, computeCommission, LEDGER_ATTEMPTS, segmentForRow } from '#shared/domain/commissions';
import { parseOrderEvent } from '#shared/domain/order-events';
import { logger } from '#shared/logger';
import { workerContext } from './support/api';
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
    const commission = computeCommission(order(), SEGMENTS, { tier_slug: 'gold' });
    expect(commission.rows).toEqual([
      { row_uuid: 'row-1', segment_uuid: 'seg-shoes', rate: 12.5, base_value: 20000, amount: 2500 },
      { row_uuid: 'row-2', segment_uuid: 'seg-default', rate: 10, base_value: 19999, amount: 2000 },
    ]);
    expect(commission).toMatchObject({ total_amount: 4500, tier_slug: 'gold' });
  });

  it('pays 0 for a tier the segment has no rate for, or an affiliate without a tier', () => {
    expect(computeCommission(order(), SEGMENTS, { tier_slug: 'silver' }).rows.map((row) => row.amount)).toEqual([0, 1000]);
    expect(computeCommission(order(), SEGMENTS, { tier_slug: null }).total_amount).toBe(0);
    expect(computeCommission(order(), SEGMENTS, undefined).tier_slug).toBeNull();
  });
});

describe('parseOrderEvent', () => {
  it('accepts the three order events, with their version (optional for messages queued before versions)', () => {
    for (const type of ['order.created', 'order.updated', 'order.cancelled']) {
      expect(parseOrderEvent(JSON.stringify({ type, merchant_id: MERCHANT, order_uuid: ORDER, version: 2, extra: 1 }))).toEqual({
        type,
        merchant_id: MERCHANT,
        order_uuid: ORDER,
        version: 2,
      });
    }
    expect(parseOrderEvent(JSON.stringify({ type: 'order.created', merchant_id: MERCHANT, order_uuid: ORDER }))).toEqual({
      type: 'order.created',
      merchant_id: MERCHANT,
      order_uuid: ORDER,
    });
  });

  it('reads a message queued under the former names (order.accepted, order.shipping_updated) as its current type', () => {
    const former = [
      { type: 'order.accepted', current: 'order.created' },
      { type: 'order.shipping_updated', current: 'order.updated' },
    ];

    const read = former.map(({ type }) => parseOrderEvent(JSON.stringify({ type, merchant_id: MERCHANT, order_uuid: ORDER }))?.type);

    expect(read).toEqual(former.map(({ current }) => current));
  });

  it('refuses anything else', () => {
    const bodies = [
      'not json',
      'null',
      '[]',
      JSON.stringify({ type: 'order.deleted', merchant_id: MERCHANT, order_uuid: ORDER }),
      JSON.stringify({ type: 'order.created', merchant_id: MERCHANT }),
      JSON.stringify({ type: 'order.cancelled', merchant_id: MERCHANT, order_uuid: ORDER, version: 0 }),
      JSON.stringify({ type: 'order.cancelled', merchant_id: MERCHANT, order_uuid: ORDER, version: '2' }),
      // Names an object has by inheritance are not former type names.
      JSON.stringify({ type: 'toString', merchant_id: MERCHANT, order_uuid: ORDER }),
      JSON.stringify({ type: '__proto__', merchant_id: MERCHANT, order_uuid: ORDER }),
    ];
    for (const body of bodies) expect(parseOrderEvent(body), body).toBeUndefined();
  });
});

const NOW = '2026-03-10T09:00:00.000Z';
const LATER = '2026-03-10T10:00:00.000Z';
const CANCELLED_AT = '2026-03-10T08:30:00.000Z';
const accrual = () => computeCommission(order(), SEGMENTS, { tier_slug: 'gold' });

describe('advanceLedger (the ledger transitions)', () => {
  it('accrues the commission of an accepted order: pending, net = the accrual', () => {
    // Act
    const { ledger, booked } = advanceLedger(undefined, order({ version: 1 }), accrual(), NOW);

    // Assess
    expect(booked).toEqual([{ type: 'accrual', amount: 4500, at: NOW, version: 1 }]);
    expect(ledger).toMatchObject({
      order_uuid: ORDER,
      status: 'pending',
      net_amount: 4500,
      currency_code: 'EUR',
      applied_version: 1,
      tier_slug: 'gold',
      created_at: NOW,
    });
    expect(ledger.rows).toHaveLength(2);
  });

  it('reverses the accrual of an order cancelled after it was accrued, and voids the ledger (net 0)', () => {
    // Prepare
    const accrued = advanceLedger(undefined, order({ version: 1 }), accrual(), NOW).ledger;

    // Act
    const { ledger, booked } = advanceLedger(accrued, order({ version: 2, cancelled_at: CANCELLED_AT }), undefined, LATER);

    // Assess
    expect(booked).toEqual([{ type: 'reversal', amount: -4500, at: LATER, version: 2 }]);
    expect(ledger).toMatchObject({ status: 'void', net_amount: 0, applied_version: 2, created_at: NOW, updated_at: LATER });
    expect(ledger.entries.map((entry) => entry.type)).toEqual(['accrual', 'reversal']);
  });

  it('voids without accrual or reversal an order already cancelled when its ledger is first written (cancel delivered before the accept)', () => {
    // Act
    const { ledger, booked } = advanceLedger(undefined, order({ version: 2, cancelled_at: CANCELLED_AT }), undefined, NOW);

    // Assess
    expect(booked).toEqual([]);
    expect(ledger).toMatchObject({ status: 'void', net_amount: 0, applied_version: 2, entries: [] });
  });

  it('records a shipping change with amount 0 (shipping carries no commission)', () => {
    // Prepare
    const accrued = advanceLedger(undefined, order({ version: 1 }), accrual(), NOW).ledger;

    // Act
    const { ledger, booked } = advanceLedger(accrued, order({ version: 2, total_shipping_value: 995 }), undefined, LATER);

    // Assess
    expect(booked).toEqual([{ type: 'shipping_change', amount: 0, at: LATER, version: 2 }]);
    expect(ledger).toMatchObject({ status: 'pending', net_amount: 4500, applied_version: 2 });
  });

  it('applies several versions at once, in version order: accrual, shipping changes, then the reversal', () => {
    // Act: first seen at version 3 (accepted, then two PATCHes), then cancelled as version 4
    const { ledger } = advanceLedger(undefined, order({ version: 3 }), accrual(), NOW);
    const cancelled = advanceLedger(ledger, order({ version: 4, cancelled_at: CANCELLED_AT }), undefined, LATER).ledger;

    // Assess
    expect(ledger.entries.map((entry) => [entry.type, entry.version])).toEqual([
      ['accrual', 1],
      ['shipping_change', 2],
      ['shipping_change', 3],
    ]);
    expect(cancelled.entries.map((entry) => [entry.type, entry.amount])).toEqual([
      ['accrual', 4500],
      ['shipping_change', 0],
      ['shipping_change', 0],
      ['reversal', -4500],
    ]);
    expect(cancelled).toMatchObject({ status: 'void', net_amount: 0, applied_version: 4 });
  });
});

const COMMISSION_KEY = { pk: `M#${MERCHANT}`, sk: `COMMISSION#${ORDER}` };
const ORDER_KEY = { pk: `M#${MERCHANT}`, sk: `ORDER#${ORDER}` };
/** A stored ledger, as advanceLedger built it. */
const storedLedger = (orderState: Partial<OrderItem>, previous?: ReturnType<typeof advanceLedger>['ledger']) => {
  const { ledger } = advanceLedger(previous, order(orderState), orderState.cancelled_at ? undefined : accrual(), NOW);
  return { ...COMMISSION_KEY, type: 'commission', ...ledger };
};
const ledgerPuts = () => ddbMock.commandCalls(PutCommand).map((call) => call.args[0].input);

describe('applyOrderChanges', () => {
  beforeEach(() => {
    // Prepare
    resetAwsMocks();
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).resolves({ Item: order({ version: 1 }) });
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: 'AFFILIATE#alice' } }).resolves(AFFILIATE);
    ddbMock.on(QueryCommand).resolves({ Items: storedSegments });
    ddbMock.on(PutCommand).resolves({});
  });

  it('writes a new ledger with the accrual, on the condition that there is none yet, reading order and ledger consistently', async () => {
    // Act
    const { outcome, booked } = await applyOrderChanges(MERCHANT, ORDER);

    // Assess
    expect(outcome).toBe('applied');
    expect(booked.map((entry) => entry.type)).toEqual(['accrual']);
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: ORDER_KEY, ConsistentRead: true });
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: COMMISSION_KEY, ConsistentRead: true });
    expect(ledgerPuts()).toEqual([
      {
        TableName: 'unit-table',
        Item: expect.objectContaining({ ...COMMISSION_KEY, type: 'commission', status: 'pending', net_amount: 4500, applied_version: 1 }),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    ]);
  });

  it('reads order and ledger eventually consistently when the message names the version it announces, once the order has reached it', async () => {
    // Prepare: the order's shipping re-priced (version 2) after its accrual
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).resolves({ Item: order({ version: 2 }) });
    ddbMock.on(GetCommand, { Key: COMMISSION_KEY }).resolves({ Item: storedLedger({ version: 1 }) });

    // Act
    const { outcome } = await applyOrderChanges(MERCHANT, ORDER, 2);

    // Assess
    expect(outcome).toBe('applied');
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: ORDER_KEY, ConsistentRead: false });
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: COMMISSION_KEY, ConsistentRead: false });
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: ORDER_KEY, ConsistentRead: true });
  });

  it("reads no ledger for an order's first message: the new ledger's put is conditional on there being none", async () => {
    // Act
    const { outcome } = await applyOrderChanges(MERCHANT, ORDER, 1);

    // Assess
    expect(outcome).toBe('applied');
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: ORDER_KEY, ConsistentRead: false });
    expect(ddbMock).not.toHaveReceivedCommandWith(GetCommand, { Key: COMMISSION_KEY });
    expect(ledgerPuts()).toEqual([expect.objectContaining({ ConditionExpression: 'attribute_not_exists(pk)' })]);
  });

  it("finds a redelivered first message's ledger once its put is refused, and books nothing twice", async () => {
    // Prepare: the ledger the first delivery wrote
    ddbMock.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));
    ddbMock.on(GetCommand, { Key: COMMISSION_KEY, ConsistentRead: true }).resolves({ Item: storedLedger({ version: 1 }) });

    // Act
    const { outcome, booked } = await applyOrderChanges(MERCHANT, ORDER, 1);

    // Assess
    expect(outcome).toBe('duplicate');
    expect(booked).toEqual([]);
    expect(ledgerPuts()).toHaveLength(1);
  });

  it('reads order and ledger again strongly when the eventually consistent order is behind the announced version', async () => {
    // Prepare: a replica still holds version 1 of an order already cancelled (version 2)
    ddbMock.on(GetCommand, { Key: ORDER_KEY, ConsistentRead: false }).resolves({ Item: order({ version: 1 }) });
    ddbMock.on(GetCommand, { Key: ORDER_KEY, ConsistentRead: true }).resolves({ Item: order({ version: 2, cancelled_at: CANCELLED_AT }) });
    ddbMock.on(GetCommand, { Key: COMMISSION_KEY, ConsistentRead: true }).resolves({ Item: storedLedger({ version: 1 }) });

    // Act
    const { ledger } = await applyOrderChanges(MERCHANT, ORDER, 2);

    // Assess: the ledger reaches version 2 from the ledger read strongly
    expect(ledger).toMatchObject({ status: 'void', net_amount: 0, applied_version: 2 });
    expect(ledgerPuts()).toHaveLength(1);
    expect(ledgerPuts()[0]).toMatchObject({
      ConditionExpression: 'applied_version = :applied',
      ExpressionAttributeValues: { ':applied': 1 },
    });
  });

  it('reads an order the eventually consistent read does not find again strongly before calling it missing', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: ORDER_KEY, ConsistentRead: false }).resolves({});

    // Act
    const { outcome } = await applyOrderChanges(MERCHANT, ORDER, 1);

    // Assess
    expect(outcome).toBe('applied');
    expect(ddbMock).toHaveReceivedCommandWith(GetCommand, { Key: ORDER_KEY, ConsistentRead: true });
  });

  it('appends to an existing ledger on the condition that its applied_version is still the one read', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: COMMISSION_KEY }).resolves({ Item: storedLedger({ version: 1 }) });
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).resolves({ Item: order({ version: 2, cancelled_at: CANCELLED_AT }) });

    // Act
    const { ledger } = await applyOrderChanges(MERCHANT, ORDER);

    // Assess
    expect(ledger).toMatchObject({ status: 'void', net_amount: 0, applied_version: 2 });
    expect(ledgerPuts()[0]).toMatchObject({
      ConditionExpression: 'applied_version = :applied',
      ExpressionAttributeValues: { ':applied': 1 },
    });
    // No accrual due: the rates are not read again.
    expect(ddbMock).not.toHaveReceivedCommand(QueryCommand);
  });

  it('changes nothing for a redelivered or late message: the ledger already reflects the order version', async () => {
    // Prepare: the ledger is at version 2 (cancelled), and the order.created of version 1 arrives late
    ddbMock.on(GetCommand, { Key: COMMISSION_KEY }).resolves({ Item: storedLedger({ version: 2, cancelled_at: CANCELLED_AT }) });
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).resolves({ Item: order({ version: 2, cancelled_at: CANCELLED_AT }) });

    // Act
    const { outcome, booked } = await applyOrderChanges(MERCHANT, ORDER);

    // Assess
    expect(outcome).toBe('duplicate');
    expect(booked).toEqual([]);
    expect(ddbMock).not.toHaveReceivedCommand(PutCommand);
  });

  it('reads again when a concurrent delivery wrote first, and then counts nothing twice', async () => {
    // Prepare: the first read sees no ledger; the write is refused because another delivery wrote it
    const written = storedLedger({ version: 1 });
    ddbMock.on(GetCommand, { Key: COMMISSION_KEY }).resolvesOnce({}).resolves({ Item: written });
    ddbMock.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));

    // Act
    const { outcome, ledger } = await applyOrderChanges(MERCHANT, ORDER);

    // Assess
    expect(outcome).toBe('duplicate');
    expect(ledger?.entries).toHaveLength(1);
    expect(ddbMock).toHaveReceivedCommandTimes(PutCommand, 1);
  });

  it('gives up after LEDGER_ATTEMPTS refused writes with a transient error (SQS redelivers)', async () => {
    // Prepare
    ddbMock.on(PutCommand).rejects(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }));

    // Act
    const applying = applyOrderChanges(MERCHANT, ORDER);

    // Assess
    await expect(applying).rejects.toThrow(/kept changing/);
    expect(ddbMock).toHaveReceivedCommandTimes(PutCommand, LEDGER_ATTEMPTS);
  });

  it('reads a record of the processor before the ledger as its accrual at version 1', async () => {
    // Prepare: the old one-record-per-order shape
    const { entries: _e, net_amount: _n, applied_version: _a, updated_at: _u, ...old } = storedLedger({ version: 1 });
    ddbMock.on(GetCommand, { Key: COMMISSION_KEY }).resolves({ Item: { ...old, total_amount: 4500 } });
    ddbMock.on(GetCommand, { Key: ORDER_KEY }).resolves({ Item: order({ version: 2, cancelled_at: CANCELLED_AT }) });

    // Act
    const { ledger } = await applyOrderChanges(MERCHANT, ORDER);

    // Assess
    expect(ledger?.entries.map((entry) => [entry.type, entry.amount])).toEqual([
      ['accrual', 4500],
      ['reversal', -4500],
    ]);
    expect(ledgerPuts()[0]?.ConditionExpression).toBe('attribute_exists(pk) AND attribute_not_exists(applied_version)');
  });

  it('fails for an order that does not exist', async () => {
    await expect(applyOrderChanges(MERCHANT, '00000000-0000-4000-8000-0000000000ff')).rejects.toThrow(/does not exist/);
  });
});

const DLQ_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/unit-orders-dlq';
const record = (messageId: string, body: string) => ({
  messageId,
  body,
  receiptHandle: messageId,
  attributes: { ApproximateReceiveCount: '1' },
});
const accepted = (orderUuid: string) => JSON.stringify({ type: 'order.created', merchant_id: MERCHANT, order_uuid: orderUuid });
const UNKNOWN_ORDER = '00000000-0000-4000-8000-0000000000ff';
const POISON_ORDER = '00000000-0000-4000-8000-0000000000ee';

describe('the consumer handler', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  beforeEach(() => {
    resetAwsMocks();
    ddbMock.on(GetCommand).resolves({});
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: `ORDER#${ORDER}` } }).resolves({ Item: order() });
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: `ORDER#${POISON_ORDER}` } }).resolves({
      Item: order({
        uuid: POISON_ORDER,
        order_rows: [
          {
            uuid: 'row-1',
            product_sku: null,
            product_name: 'Tent',
            segment_slug: null,
            price_value: 19900,
            tax_value: null,
            quantity: Number.MAX_SAFE_INTEGER,
          },
        ],
      }),
    });
    ddbMock.on(GetCommand, { Key: { pk: `M#${MERCHANT}`, sk: 'AFFILIATE#alice' } }).resolves(AFFILIATE);
    ddbMock.on(QueryCommand).resolves({ Items: storedSegments });
    ddbMock.on(PutCommand).resolves({});
    sqsMock.on(SendMessageCommand).resolves({ MessageId: 'dlq-1' });
  });

  it('moves messages that can never succeed to the DLQ at once, with the reason, and acknowledges them', async () => {
    // Prepare
    const event = {
      Records: [
        record('good', accepted(ORDER)),
        record('malformed', '{'),
        record('unknown-order', accepted(UNKNOWN_ORDER)),
        record('poison', accepted(POISON_ORDER)),
      ],
    };

    // Act
    const response = await handler(event as never, workerContext('commissions-process'));

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const sent = sqsMock.commandCalls(SendMessageCommand).map((call) => call.args[0].input);
    expect(sent.map((input) => input.QueueUrl)).toEqual([DLQ_URL, DLQ_URL, DLQ_URL]);
    const byId = Object.fromEntries(sent.map((input) => [input.MessageAttributes?.original_message_id?.StringValue, input]));
    expect(byId.malformed).toMatchObject({
      MessageBody: '{',
      MessageAttributes: {
        dead_letter_reason: { DataType: 'String', StringValue: 'Not an order event message' },
        dead_letter_error: { DataType: 'String', StringValue: 'PermanentMessageError' },
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

  it('logs one line for the batch, counting the ledgers it brought up and naming the orders it found up to date; a failed message on its own', async () => {
    // Prepare: the second message of the order finds the ledger the first one wrote.
    ddbMock
      .on(GetCommand, { Key: COMMISSION_KEY })
      .resolvesOnce({})
      .resolves({ Item: storedLedger({ version: 1 }) });
    const info = vi.spyOn(logger, 'info');
    const error = vi.spyOn(logger, 'error');
    const event = { Records: [record('first', accepted(ORDER)), record('malformed', '{'), record('again', accepted(ORDER))] };

    // Act
    await handler(event as never, workerContext('commissions-process'));

    // Assess
    expect(info.mock.calls).toEqual([
      ['Commission ledgers brought up to their orders', { applied: 1, duplicate: 1, duplicate_orders: [ORDER] }],
    ]);
    expect(error.mock.calls).toEqual([
      ['Message can never succeed: moved to the dead-letter queue', expect.objectContaining({ message_id: 'malformed' })],
    ]);
  });

  it('reports a transient failure for redelivery and sends nothing to the DLQ', async () => {
    // Prepare
    ddbMock.on(PutCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ProvisionedThroughputExceededException' }));

    // Act
    const response = await handler({ Records: [record('throttled', accepted(ORDER))] } as never, workerContext('commissions-process'));

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'throttled' }] });
    expect(sqsMock).not.toHaveReceivedCommand(SendMessageCommand);
  });

  it('reports a permanent failure for redelivery when the DLQ refuses it, so it is never lost', async () => {
    // Prepare
    sqsMock.on(SendMessageCommand).rejects(Object.assign(new Error('timed out'), { name: 'TimeoutError' }));

    // Act
    const response = await handler(
      { Records: [record('good', accepted(ORDER)), record('malformed', 'not json')] } as never,
      workerContext('commissions-process'),
    );

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'malformed' }] });
  });
});
