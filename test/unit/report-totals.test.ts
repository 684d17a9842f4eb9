import { BatchWriteCommand, QueryCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { processChangeRecords } from '#functions/changes/feed';
import { functionTable } from '#shared/db/client';
import { paddedSequence, replaceClosedTotals } from '#shared/db/entities/commission-totals';
import { commissionReport, ledgerTotalsDeltas, rangeParts } from '#shared/domain/reports';
import { reportQuery } from '#shared/schemas/reports';
import { conditionFailed, ddbMock, resetAwsMocks, throttling } from './support/aws';
import { MERCHANT, MERCHANT_PK } from './support/fixtures';

const ORDER = '0b7e7a4c-1d2e-4f30-8a41-5b6c7d8e9f00';

const ledger = (entries: { type: string; amount: number; at: string; version: number }[], overrides: Record<string, unknown> = {}) => ({
  pk: MERCHANT_PK,
  sk: `COMMISSION#${ORDER}`,
  type: 'commission',
  order_uuid: ORDER,
  order_no: 'A-1',
  affiliate_slug: 'alice',
  tier_slug: 'gold',
  currency_code: 'EUR',
  status: 'pending',
  rows: [
    { row_uuid: 'r1', segment_uuid: null, rate: 10, base_value: 19_900, amount: 1_990 },
    { row_uuid: 'r2', segment_uuid: null, rate: 10, base_value: 1_000, amount: 100 },
  ],
  entries,
  net_amount: entries.reduce((sum, entry) => sum + entry.amount, 0),
  applied_version: entries.length,
  created_at: '2026-11-30T22:00:00.000Z',
  updated_at: entries.at(-1)?.at ?? '2026-11-30T22:00:00.000Z',
  ...overrides,
});

const ACCRUAL = { type: 'accrual', amount: 2_090, at: '2026-11-30T22:00:00.000Z', version: 1 };
const SHIPPING = { type: 'shipping_change', amount: 0, at: '2026-11-30T23:00:00.000Z', version: 2 };
const REVERSAL = { type: 'reversal', amount: -2_090, at: '2026-12-01T08:00:00.000Z', version: 3 };

const record = (sequence: number, after: Record<string, unknown>, before?: Record<string, unknown>): DynamoDBRecord => ({
  eventID: `event-${sequence}`,
  eventName: before ? 'MODIFY' : 'INSERT',
  dynamodb: {
    ApproximateCreationDateTime: 1_795_000_000,
    Keys: marshall({ pk: after.pk, sk: after.sk }) as never,
    NewImage: marshall(after, { removeUndefinedValues: true }) as never,
    ...(before ? { OldImage: marshall(before, { removeUndefinedValues: true }) as never } : {}),
    SequenceNumber: String(sequence),
    StreamViewType: 'NEW_AND_OLD_IMAGES',
  },
});

const totalsUpdates = () =>
  ddbMock
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input as UpdateCommandInput)
    .filter((input) => String(input.Key?.pk).includes('#TOTALS'));

beforeEach(() => {
  resetAwsMocks();
  // The change feed logs events with BatchWriteItem: all processed.
  ddbMock.on(BatchWriteCommand).resolves({});
  ddbMock.on(UpdateCommand).resolves({});
  ddbMock.on(QueryCommand).resolves({ Items: [] });
});

describe('ledgerTotalsDeltas (what a ledger write adds to the report totals)', () => {
  it('counts an accrual as one order with its row value, on the UTC day and month it was booked', () => {
    // Act
    const deltas = ledgerTotalsDeltas(undefined, ledger([ACCRUAL]));

    // Assess
    const figures = {
      orders: 1,
      sales_value: 20_900,
      accrued_value: 2_090,
      reversed_value: 0,
      affiliate_slug: 'alice',
      currency_code: 'EUR',
    };
    expect(deltas).toEqual([
      { ...figures, kind: 'D', period: '2026-11-30' },
      { ...figures, kind: 'M', period: '2026-11' },
    ]);
  });

  it('adds nothing for a shipping change, and books a cancel on its own day and month, not the accrual’s', () => {
    // Act
    const shipping = ledgerTotalsDeltas(ledger([ACCRUAL]), ledger([ACCRUAL, SHIPPING]));
    const cancel = ledgerTotalsDeltas(ledger([ACCRUAL, SHIPPING]), ledger([ACCRUAL, SHIPPING, REVERSAL], { status: 'void' }));

    // Assess
    expect(shipping).toEqual([]);
    expect(
      cancel.map(({ kind, period, orders, sales_value, reversed_value }) => ({ kind, period, orders, sales_value, reversed_value })),
    ).toEqual([
      { kind: 'D', period: '2026-12-01', orders: 0, sales_value: 0, reversed_value: -2_090 },
      { kind: 'M', period: '2026-12', orders: 0, sales_value: 0, reversed_value: -2_090 },
    ]);
  });
});

describe('rangeParts (the stored periods that cover a range exactly)', () => {
  it('reads whole months from month totals and the part months around them from day totals', () => {
    expect(rangeParts('2026-11-01', '2026-12-01')).toEqual({ months: { from: '2026-11', to: '2026-12' }, days: [] });
    expect(rangeParts('2026-01-01', '2027-01-01')).toEqual({ months: { from: '2026-01', to: '2027-01' }, days: [] });
    expect(rangeParts('2026-10-15', '2026-12-03')).toEqual({
      months: { from: '2026-11', to: '2026-12' },
      days: [
        { from: '2026-10-15', to: '2026-11-01' },
        { from: '2026-12-01', to: '2026-12-03' },
      ],
    });
    expect(rangeParts('2026-11-03', '2026-11-20')).toEqual({ months: undefined, days: [{ from: '2026-11-03', to: '2026-11-20' }] });
    expect(rangeParts('9999-12-30', '9999-12-31')).toEqual({ months: undefined, days: [{ from: '9999-12-30', to: '9999-12-31' }] });
  });
});

describe('reportQuery (the dates a report is asked for)', () => {
  it('refuses, naming the field, a date that does not exist or a range whose end has no date', () => {
    // Act
    const refusals = [
      { from: '2026-13-01' },
      { from: '2026-00-01' },
      { from: '2026-12-32' },
      { to: '2026-11-00' },
      { from: '9999-12-01' },
    ].map((query) => z.safeParse(reportQuery, query).error?.issues.map((issue) => [issue.path.join('.'), issue.message]));

    // Assess
    expect(refusals).toEqual([
      [['from', 'The :attribute field must match the format Y-m-d.']],
      [['from', 'The :attribute field must match the format Y-m-d.']],
      [['from', 'The :attribute field must match the format Y-m-d.']],
      [['to', 'The :attribute field must match the format Y-m-d.']],
      [['from', 'The :attribute field must be a date before 9999-12-01.']],
    ]);
  });

  it('matches an affiliate_slug in any case, as slugs are everywhere else', () => {
    expect(z.parse(reportQuery, { affiliate_slug: 'ALICE' })).toMatchObject({ affiliate_slug: 'alice' });
  });

  it('takes the last days a date can name', () => {
    expect(z.parse(reportQuery, { from: '9999-12-30', to: '9999-12-31' })).toMatchObject({ from: '9999-12-30', to: '9999-12-31' });
  });
});

describe('the change feed keeps the report totals', () => {
  it('adds a ledger write once: every totals write is conditional on the record not being applied yet', async () => {
    // Act
    const from = await processChangeRecords([record(7, ledger([ACCRUAL]))]);

    // Assess
    expect(from).toBeUndefined();
    const updates = totalsUpdates();
    expect(updates).toHaveLength(4);
    for (const update of updates) {
      expect(update.ConditionExpression).toBe('attribute_not_exists(applied_through) OR applied_through < :first');
      expect(update.ExpressionAttributeValues).toMatchObject({ ':first': paddedSequence('7'), ':last': paddedSequence('7') });
      expect(String(update.Key?.pk).startsWith(`M#${MERCHANT.id}#TOTALS`)).toBe(true);
    }
  });

  it("indexes an affiliate's day item for a report of that affiliate alone, and takes its month item off the index", async () => {
    // Act
    await processChangeRecords([record(7, ledger([ACCRUAL]))]);

    // Assess: one index entry per ledger write (the day's); the month's is removed should an older write have left one
    const affiliateItems = totalsUpdates().filter((update) => update.Key?.pk === `M#${MERCHANT.id}#TOTALS#A`);
    const day = affiliateItems.find((update) => String(update.Key?.sk).startsWith('D#'));
    const month = affiliateItems.find((update) => String(update.Key?.sk).startsWith('M#'));
    expect(day?.UpdateExpression).toContain('gsi1pk = :gpk, gsi1sk = :gsk');
    expect(day?.ExpressionAttributeValues).toMatchObject({ ':gpk': `M#${MERCHANT.id}#TOTALS#A#alice`, ':gsk': 'D#2026-11-30#EUR' });
    expect(month?.UpdateExpression).toContain('REMOVE gsi1pk, gsi1sk');
    expect(month?.ExpressionAttributeValues).not.toHaveProperty(':gpk');
  });

  it("writes each totals item once per batch, whatever the number of a merchant's ledger writes in it, with their sum", async () => {
    // Prepare: three orders of one affiliate booked on one day.
    const records = [10, 11, 12].map((sequence) => record(sequence, ledger([ACCRUAL], { order_uuid: `order-${sequence}` })));

    // Act
    const from = await processChangeRecords(records);

    // Assess
    expect(from).toBeUndefined();
    const updates = totalsUpdates();
    expect(updates).toHaveLength(4);
    for (const update of updates) {
      expect(update.ExpressionAttributeValues).toMatchObject({
        ':first': paddedSequence('10'),
        ':last': paddedSequence('12'),
        ':orders': 3,
        ':sales': 3 * 20_900,
        ':accrued': 3 * 2_090,
      });
    }
  });

  it('adds only the records an item has not applied yet when a batch is read again, conditional on what it applied', async () => {
    // Prepare: the affiliate's day item applied record 10 before (the batch failed after it); nothing else did.
    const dayItem = { pk: `M#${MERCHANT.id}#TOTALS#A`, sk: 'D#2026-11-30#alice#EUR' };
    ddbMock
      .on(UpdateCommand, { Key: dayItem, ConditionExpression: 'attribute_not_exists(applied_through) OR applied_through < :first' })
      .rejects(conditionFailed(marshall({ applied_through: paddedSequence('10'), created_seq: paddedSequence('10') })));
    const records = [10, 11].map((sequence) => record(sequence, ledger([ACCRUAL], { order_uuid: `order-${sequence}` })));

    // Act
    const from = await processChangeRecords(records);

    // Assess
    expect(from).toBeUndefined();
    const retried = totalsUpdates().filter((update) => update.Key?.sk === dayItem.sk);
    expect(retried.map((update) => [update.ConditionExpression, update.ExpressionAttributeValues?.[':orders']])).toEqual([
      ['attribute_not_exists(applied_through) OR applied_through < :first', 2],
      ['applied_through = :applied', 1],
    ]);
    expect(retried[1]?.ExpressionAttributeValues).toMatchObject({ ':applied': paddedSequence('10'), ':last': paddedSequence('11') });
  });

  it('counts the affiliate row a redelivered record created, though its own write is refused as applied', async () => {
    // Prepare: the affiliate items were written by this record before (a batch read again); the merchant's were not.
    ddbMock
      .on(UpdateCommand, { Key: { pk: `M#${MERCHANT.id}#TOTALS#A` } })
      .rejects(conditionFailed(marshall({ applied_through: paddedSequence('7'), created_seq: paddedSequence('7') })));

    // Act
    await processChangeRecords([record(7, ledger([ACCRUAL]))]);

    // Assess
    const merchantRows = totalsUpdates()
      .filter((update) => update.Key?.pk === `M#${MERCHANT.id}#TOTALS`)
      .map((update) => update.ExpressionAttributeValues?.[':rows']);
    expect(merchantRows).toEqual([1, 1]);
  });

  it("reads a merchant's ledger writes again from the first of them when its totals cannot be written, and leaves its time behind", async () => {
    // Prepare
    const first = record(10, ledger([ACCRUAL]));
    const second = record(11, ledger([ACCRUAL, SHIPPING, REVERSAL]), ledger([ACCRUAL, SHIPPING]));
    ddbMock.on(UpdateCommand, { Key: { pk: `M#${MERCHANT.id}#TOTALS` } }).rejects(throttling());

    // Act
    const from = await processChangeRecords([first, second], Date.now());

    // Assess
    expect(from).toBe('10');
    expect(totalsUpdates().filter((update) => update.ExpressionAttributeValues?.[':through'] !== undefined)).toEqual([]);
  });

  it("writes the merchant's newest month item last, with the batch's latest booking time: how far its totals reach", async () => {
    // Prepare: an accrual booked in November, its reversal in December.
    const records = [record(10, ledger([ACCRUAL])), record(11, ledger([ACCRUAL, SHIPPING, REVERSAL]), ledger([ACCRUAL, SHIPPING]))];

    // Act
    await processChangeRecords(records);

    // Assess: the items' own writes and no other
    const updates = totalsUpdates().map((update) => [update.Key?.pk, update.Key?.sk, update.ExpressionAttributeValues?.[':through']]);
    expect(updates).toHaveLength(8);
    expect(updates.at(-1)).toEqual([`M#${MERCHANT.id}#TOTALS`, 'M#2026-12#EUR', REVERSAL.at]);
    expect(updates.slice(0, -1).every(([, , through]) => through === undefined)).toBe(true);
  });
});

describe('replaceClosedTotals (a rebuild of closed periods)', () => {
  it('puts the month items that say how far the totals reach last, after every other item and removal', async () => {
    // Prepare
    const figures = { orders: 1, sales_value: 100, accrued_value: 10, reversed_value: 0, currency_code: 'EUR' };
    const items = [
      { kind: 'M' as const, period: '2025-10', ...figures, affiliate_rows: 1, through: '2025-11-01T00:00:00.000Z' },
      { kind: 'D' as const, period: '2025-10-02', ...figures, affiliate_slug: 'dora' },
      { kind: 'D' as const, period: '2025-10-02', ...figures, affiliate_rows: 1 },
    ];

    // Act
    await replaceClosedTotals(functionTable, MERCHANT.id, items, [{ kind: 'D', period: '2025-10-15', ...figures, affiliate_slug: 'dora' }]);

    // Assess
    const calls = ddbMock.commandCalls(BatchWriteCommand).map((call) =>
      Object.values(call.args[0].input.RequestItems ?? {})
        .flat()
        .map((request) => (request.PutRequest ? `put ${request.PutRequest.Item?.sk}` : `delete ${request.DeleteRequest?.Key?.sk}`)),
    );
    expect(calls).toEqual([['put D#2025-10-02#dora#EUR', 'put D#2025-10-02#EUR'], ['delete D#2025-10-15#dora#EUR'], ['put M#2025-10#EUR']]);
  });
});

describe('commissionReport (a month grouped by affiliate, a page at a time)', () => {
  const query = (page: number, perPage = 2) =>
    z.parse(reportQuery, { from: '2026-11-01', to: '2026-12-01', per_page: String(perPage), page: String(page) });
  const figures = { orders: 1, sales_value: 100, accrued_value: 10, reversed_value: 0, currency_code: 'EUR' };
  const affiliateItems = (slugs: string[]) =>
    slugs.map((slug) => ({ type: 'affiliate_totals', period: '2026-11', affiliate_slug: slug, ...figures }));
  /** The merchant's month item counts `counted` affiliate rows; the affiliate items are `slugs` (read apart, as the route does). */
  const stored = (counted: number, slugs: string[]) => {
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#TOTALS#A` } })
      .callsFake(async (input: { Limit?: number; ScanIndexForward?: boolean }) => {
        const items = affiliateItems(slugs);
        return { Items: (input.ScanIndexForward === false ? items.reverse() : items).slice(0, input.Limit) };
      });
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#TOTALS`, ':from': 'M#2026-11' } })
      .resolves({ Items: [{ type: 'merchant_totals', period: '2026-11', affiliate_rows: counted, ...figures }] });
    ddbMock.on(QueryCommand, { ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#TOTALS`, ':sk': 'AS_OF' } }).resolves({ Items: [] });
  };

  it("says how far the totals reach: the latest time of the newest month items (every currency's) and of the item stores kept before, less the ledger's lag", async () => {
    // Prepare
    stored(1, ['alice']);
    const asOf = async (kept: string | undefined, months: (string | undefined)[]) => {
      ddbMock
        .on(QueryCommand, { ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#TOTALS`, ':sk': 'AS_OF' } })
        .resolves({ Items: kept === undefined ? [] : [{ through: kept }] });
      ddbMock
        .on(QueryCommand, { ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#TOTALS`, ':from': 'M#', ':to': 'M#~' } })
        .resolves({ Items: months.map((through) => (through === undefined ? {} : { through })) });
      return (await commissionReport(functionTable, MERCHANT.id, query(1))).as_of;
    };

    // Act
    const answers = [
      await asOf(undefined, ['2026-11-30T10:00:00.000Z']),
      await asOf('2026-11-30T11:00:00.000Z', ['2026-11-30T10:00:00.000Z']),
      await asOf('2026-11-30T11:00:00.000Z', ['2026-11-30T12:00:00.000Z']),
      await asOf(undefined, ['2026-11-30T09:00:00.000Z', '2026-11-30T12:30:00.000Z', undefined]),
      await asOf('2026-11-30T11:00:00.000Z', []),
    ];

    // Assess
    expect(answers).toEqual([
      '2026-11-30T09:59:50.000Z',
      '2026-11-30T10:59:50.000Z',
      '2026-11-30T11:59:50.000Z',
      '2026-11-30T12:29:50.000Z',
      '2026-11-30T10:59:50.000Z',
    ]);
  });

  it('reports no time before the feed applied any ledger write', async () => {
    // Prepare
    stored(1, ['alice']);

    // Act
    const report = await commissionReport(functionTable, MERCHANT.id, query(1));

    // Assess
    expect(report.as_of).toBeNull();
  });

  it('reports a total past 2^53, which the SDK reads as a BigInt, as the nearest number instead of failing', async () => {
    // Prepare: five orders of the largest values in one month make 1e16 minor units of sales.
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#TOTALS#A` } })
      .resolves({ Items: [{ type: 'affiliate_totals', period: '2026-11', affiliate_slug: 'alice', ...figures, sales_value: 10n ** 16n }] });
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': `${MERCHANT_PK}#TOTALS`, ':from': 'M#2026-11' } })
      .resolves({ Items: [{ type: 'merchant_totals', period: '2026-11', affiliate_rows: 1, ...figures }] });

    // Act
    const report = await commissionReport(functionTable, MERCHANT.id, query(1));

    // Assess
    expect(report.rows.map((row) => row.sales_value)).toEqual([1e16]);
  });

  it('counts a row the feed added after the count was read, so the last page is not cut off', async () => {
    // Prepare: the count says 2, but a third affiliate's row was added between the two reads
    stored(2, ['alice', 'bob', 'carol']);

    // Act
    const first = await commissionReport(functionTable, MERCHANT.id, query(1));
    const second = await commissionReport(functionTable, MERCHANT.id, query(2));

    // Assess: the full first page cannot know of it; the short second page shows it and counts it
    expect([first.rows.length, first.total]).toEqual([2, 2]);
    expect([second.rows.map((row) => row.affiliate_slug), second.total]).toEqual([['carol'], 3]);
  });

  it('gives the rows it read as the total when its page is short, though the count already includes a newer row', async () => {
    // Prepare: the count (read beside the rows) says 4; the rows read were 3
    stored(4, ['alice', 'bob', 'carol']);

    // Act
    const first = await commissionReport(functionTable, MERCHANT.id, query(1, 5));

    // Assess
    expect([first.rows.length, first.total]).toEqual([3, 3]);
  });

  it('reads a late page backward from the last row, never the rows before it', async () => {
    // Prepare: ten affiliate rows, all counted
    const slugs = Array.from({ length: 10 }, (_, index) => `aff-${index}`);
    stored(10, slugs);

    // Act: pages of 3, the fourth and the second
    const fourth = await commissionReport(functionTable, MERCHANT.id, query(4, 3));
    const second = await commissionReport(functionTable, MERCHANT.id, query(2, 3));

    // Assess: the fourth reads the last row alone, backward; the second reads forward up to its end
    expect([fourth.rows.map((row) => row.affiliate_slug), fourth.total]).toEqual([['aff-9'], 10]);
    expect([second.rows.map((row) => row.affiliate_slug), second.total]).toEqual([['aff-3', 'aff-4', 'aff-5'], 10]);
    const reads = ddbMock
      .commandCalls(QueryCommand)
      .map((call) => call.args[0].input)
      .filter((input) => input.ExpressionAttributeValues?.[':pk'] === `${MERCHANT_PK}#TOTALS#A`);
    expect(reads.map((input) => [input.Limit, input.ScanIndexForward])).toEqual([
      [1, false],
      [6, true],
    ]);
  });

  it('answers a late page from all the rows when fewer are stored than counted', async () => {
    // Prepare: the count says 10 (a rebuild removing rows is under way), five rows are stored
    stored(10, ['a', 'b', 'c', 'd', 'e']);

    // Act: the second page of 4, read backward
    const second = await commissionReport(functionTable, MERCHANT.id, query(2, 4));

    // Assess: the fifth row, and the rows read as the total
    expect([second.rows.map((row) => row.affiliate_slug), second.total]).toEqual([['e'], 5]);
  });
});
