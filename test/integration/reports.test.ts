import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportTotalsDifferences } from '#shared/admin/report';
import type { SeededMerchant } from '#shared/admin/seed';
import { type CommissionLedger, getCommissionLedger, putCommissionLedger } from '#shared/db/entities/commission';
import { applyLedgerWrites, paddedSequence } from '#shared/db/entities/commission-totals';
import { LEDGER_WRITE_LAG_SECONDS } from '#shared/domain/reports';
import { api, eventually, merchantFixture, seed, storeFor, TRACE_ID } from './helpers';
import { runAdmin } from './program-helpers';

/**
 * The commission report reads the totals the change feed keeps from every ledger write. The
 * stack's consumer is off, so the test writes ledgers the way the consumer does (conditional
 * PutItem, entries at chosen times) and reads the report over HTTP once the stream has carried them.
 */
let merchant: SeededMerchant;
let other: SeededMerchant;
let sandbox: SeededMerchant;

const ledgerOf = (slug: string, entries: CommissionLedger['entries'], sales = 19_900, currency = 'EUR'): CommissionLedger => ({
  order_uuid: randomUUID(),
  order_no: `R-${randomUUID()}`,
  affiliate_slug: slug,
  tier_slug: 'gold',
  currency_code: currency,
  status: entries.some((entry) => entry.type === 'reversal') ? 'void' : 'pending',
  rows: [{ row_uuid: randomUUID(), segment_uuid: null, rate: 10, base_value: sales, amount: Math.round(sales / 10) }],
  entries,
  net_amount: entries.reduce((sum, entry) => sum + entry.amount, 0),
  applied_version: Math.max(...entries.map((entry) => entry.version)),
  created_at: entries[0]?.at ?? '2026-01-01T00:00:00.000Z',
  updated_at: entries.at(-1)?.at ?? '2026-01-01T00:00:00.000Z',
});

const accrual = (amount: number, at: string) => ({ type: 'accrual' as const, amount, at, version: 1 });

/** Writes a ledger as the consumer does: the first write, then each later version on the one before. */
const booked: string[] = [];
const book = async (seeded: SeededMerchant, ledger: CommissionLedger, stage: 'live' | 'sandbox' = 'live') => {
  const store = storeFor(stage);
  if (seeded === merchant) booked.push(ledger.order_uuid);
  for (let count = 1; count <= ledger.entries.length; count++) {
    const entries = ledger.entries.slice(0, count);
    const { stamp } = await getCommissionLedger(store, seeded.id, ledger.order_uuid, true);
    const written = { ...ledger, entries, net_amount: entries.reduce((sum, entry) => sum + entry.amount, 0) };
    expect(await putCommissionLedger(store, seeded.id, written, stamp)).toBe(true);
  }
};

const report = (seeded: SeededMerchant, query: Record<string, string>, stage: 'live' | 'sandbox' = 'live') =>
  api(stage, stage === 'live' ? seeded.tokens.live : seeded.tokens.test).get(`/api/v2/reports/commissions?${new URLSearchParams(query)}`);

/** The report once the feed has applied `orders` accruals in it. */
const settled = (seeded: SeededMerchant, query: Record<string, string>, orders: number, stage: 'live' | 'sandbox' = 'live') =>
  eventually(async () => {
    const response = await report(seeded, query, stage);
    const rows = response.body.data?.rows as { orders: number }[] | undefined;
    // Settled: every order counted, and the row count (a totals item of its own, written in the same batch) caught up.
    const counted = rows && rows.reduce((sum, row) => sum + row.orders, 0) === orders;
    return counted && response.body.meta.pagination.total >= rows.length ? response : undefined;
  }, 15_000);

beforeAll(async () => {
  const affiliates = ['alice', 'bob', 'carol'].map((slug) => ({
    slug,
    name: slug,
    email: `${slug}@example.com`,
    tier: 'gold',
    status: 'active' as const,
  }));
  const seeded = await seed([merchantFixture({ key: 'reports', affiliates }), merchantFixture({ key: 'reports_other', affiliates })]);
  merchant = seeded.reports as SeededMerchant;
  other = seeded.reports_other as SeededMerchant;
  sandbox = (await seed([merchantFixture({ key: 'reports', affiliates })], 'sandbox')).reports as SeededMerchant;

  // November: alice two orders, bob one (cancelled in December); carol one in December.
  await book(merchant, ledgerOf('alice', [accrual(1_990, '2025-11-03T10:00:00.000Z')]));
  await book(
    merchant,
    ledgerOf(
      'alice',
      [accrual(990, '2025-11-20T23:59:59.999Z'), { type: 'shipping_change', amount: 0, at: '2025-11-21T08:00:00.000Z', version: 2 }],
      9_900,
    ),
  );
  await book(
    merchant,
    ledgerOf(
      'bob',
      [accrual(500, '2025-11-25T12:00:00.000Z'), { type: 'reversal', amount: -500, at: '2025-12-02T09:00:00.000Z', version: 2 }],
      5_000,
    ),
  );
  await book(merchant, ledgerOf('carol', [accrual(700, '2025-12-01T00:00:00.000Z')], 7_000));
  // Another merchant, and the sandbox, with orders of their own.
  await book(other, ledgerOf('alice', [accrual(100_000, '2025-11-05T10:00:00.000Z')], 1_000_000));
  await book(sandbox, ledgerOf('alice', [accrual(42, '2025-11-05T10:00:00.000Z')], 420), 'sandbox');
});

describe('GET /api/v2/reports/commissions', () => {
  it('totals a month by affiliate as its ledgers book it: orders, their row value, accrued, reversed and net', async () => {
    const response = await settled(merchant, { from: '2025-11-01', to: '2025-12-01' }, 3);

    expect(response.status).toBe(200);
    expect(response.body.meta.trace_id).toMatch(TRACE_ID);
    expect(response.body.data.rows).toEqual([
      {
        affiliate_slug: 'alice',
        currency_code: 'EUR',
        orders: 2,
        sales_value: 29_800,
        accrued_value: 2_980,
        reversed_value: 0,
        net_value: 2_980,
      },
      { affiliate_slug: 'bob', currency_code: 'EUR', orders: 1, sales_value: 5_000, accrued_value: 500, reversed_value: 0, net_value: 500 },
    ]);
    expect(response.body.meta.pagination).toMatchObject({ total: 2, current_page: 1, last_page: 1, per_page: 15 });
  });

  it('books a December cancel of a November order in December', async () => {
    const response = await settled(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'affiliate,month' }, 4);

    expect(response.body.data.rows).toEqual([
      {
        affiliate_slug: 'alice',
        period: '2025-11',
        currency_code: 'EUR',
        orders: 2,
        sales_value: 29_800,
        accrued_value: 2_980,
        reversed_value: 0,
        net_value: 2_980,
      },
      {
        affiliate_slug: 'bob',
        period: '2025-11',
        currency_code: 'EUR',
        orders: 1,
        sales_value: 5_000,
        accrued_value: 500,
        reversed_value: 0,
        net_value: 500,
      },
      {
        affiliate_slug: 'bob',
        period: '2025-12',
        currency_code: 'EUR',
        orders: 0,
        sales_value: 0,
        accrued_value: 0,
        reversed_value: -500,
        net_value: -500,
      },
      {
        affiliate_slug: 'carol',
        period: '2025-12',
        currency_code: 'EUR',
        orders: 1,
        sales_value: 7_000,
        accrued_value: 700,
        reversed_value: 0,
        net_value: 700,
      },
    ]);
  });

  it('groups by month and by day over part months, from day totals where a month is not whole', async () => {
    const months = await settled(merchant, { from: '2025-11-10', to: '2025-12-02', group_by: 'month' }, 3);
    const days = await settled(merchant, { from: '2025-11-20', to: '2025-11-26', group_by: 'day' }, 2);

    expect(months.body.data.rows).toEqual([
      {
        period: '2025-11',
        currency_code: 'EUR',
        orders: 2,
        sales_value: 14_900,
        accrued_value: 1_490,
        reversed_value: 0,
        net_value: 1_490,
      },
      { period: '2025-12', currency_code: 'EUR', orders: 1, sales_value: 7_000, accrued_value: 700, reversed_value: 0, net_value: 700 },
    ]);
    expect(days.body.data.rows.map((row: { period: string }) => row.period)).toEqual(['2025-11-20', '2025-11-25']);
  });

  it('pages affiliate rows in order with the total, and reports one affiliate alone', async () => {
    await settled(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'month' }, 4);
    const first = await report(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'affiliate,day', per_page: '2' });
    const second = await report(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'affiliate,day', per_page: '2', page: '2' });
    const third = await report(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'affiliate,day', per_page: '2', page: '3' });
    const bob = await report(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'affiliate', affiliate_slug: 'bob' });
    const bobByMonth = await report(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'month', affiliate_slug: 'bob' });
    const bobByDay = await report(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'day', affiliate_slug: 'bob' });
    const nobody = await report(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'day', affiliate_slug: 'nobody' });
    const farPast = await report(merchant, {
      from: '2025-11-01',
      to: '2026-01-01',
      group_by: 'affiliate,day',
      per_page: '100',
      page: '21474837',
    });

    expect(first.body.meta.pagination).toMatchObject({ total: 5, last_page: 3 });
    expect(
      [...first.body.data.rows, ...second.body.data.rows].map(
        (row: { period: string; affiliate_slug: string }) => `${row.period} ${row.affiliate_slug}`,
      ),
    ).toEqual(['2025-11-03 alice', '2025-11-20 alice', '2025-11-25 bob', '2025-12-01 carol']);
    // The later pages are read backward from the last row: the same order, the last row once.
    expect(third.body.data.rows.map((row: { period: string; affiliate_slug: string }) => `${row.period} ${row.affiliate_slug}`)).toEqual([
      '2025-12-02 bob',
    ]);
    expect(bob.body.data.rows).toEqual([
      {
        affiliate_slug: 'bob',
        currency_code: 'EUR',
        orders: 1,
        sales_value: 5_000,
        accrued_value: 500,
        reversed_value: -500,
        net_value: 0,
      },
    ]);
    // Grouped by time alone, the filter still holds: bob's figures only, per period.
    expect(
      bobByMonth.body.data.rows.map((row: { period: string; orders: number; net_value: number }) => [
        row.period,
        row.orders,
        row.net_value,
      ]),
    ).toEqual([
      ['2025-11', 1, 500],
      ['2025-12', 0, -500],
    ]);
    expect(bobByDay.body.data.rows.map((row: { period: string }) => row.period)).toEqual(['2025-11-25', '2025-12-02']);
    expect(nobody.body.data.rows).toEqual([]);
    // A page far past the last is empty (its read would have asked DynamoDB for more than an int32 of items).
    expect(farPast.status).toBe(200);
    expect(farPast.body.data.rows).toEqual([]);
    expect(farPast.body.meta.pagination).toMatchObject({ total: 5 });
  });

  it('shows each merchant only its own ledgers, and the sandbox only its own', async () => {
    const mine = await settled(other, { from: '2025-11-01', to: '2025-12-01' }, 1);
    const test = await settled(sandbox, { from: '2025-11-01', to: '2025-12-01' }, 1, 'sandbox');

    expect(mine.body.data.rows).toEqual([
      {
        affiliate_slug: 'alice',
        currency_code: 'EUR',
        orders: 1,
        sales_value: 1_000_000,
        accrued_value: 100_000,
        reversed_value: 0,
        net_value: 100_000,
      },
    ]);
    expect(test.body.data.rows.map((row: { accrued_value: number }) => row.accrued_value)).toEqual([42]);
  });

  it('says up to when every entry is included: behind the newest applied write by the ledger write lag, never ahead of it', async () => {
    const booked = Date.now();
    await book(merchant, ledgerOf('alice', [accrual(10, new Date(booked).toISOString())], 100));
    const today = new Date(booked).toISOString().slice(0, 10);
    const tomorrow = new Date(booked + 24 * 3600 * 1000).toISOString().slice(0, 10);
    await settled(merchant, { from: today, to: tomorrow, group_by: 'day' }, 1);
    const lower = booked - LEDGER_WRITE_LAG_SECONDS * 1000;

    const asOf = await eventually(async () => {
      const { body } = await report(merchant, { from: today, to: tomorrow, group_by: 'day' });
      const at = Date.parse(body.meta.as_of);
      return at >= lower ? at : undefined;
    });

    expect(asOf).toBeLessThanOrEqual(Date.now() - LEDGER_WRITE_LAG_SECONDS * 1000);
  });

  it('prints the same rows to the operator, as CSV for the payout run, and its totals equal what the ledgers add up to', async () => {
    await settled(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'month' }, 4);
    const api = await report(merchant, { from: '2025-11-01', to: '2026-01-01', group_by: 'affiliate,month' });

    const json = await runAdmin(
      'report',
      '--merchant',
      merchant.id,
      '--from',
      '2025-11-01',
      '--to',
      '2026-01-01',
      '--group-by',
      'affiliate,month',
    );
    const csv = await runAdmin('report', '--merchant', merchant.id, '--from', '2025-11-01', '--to', '2025-12-01', '--format', 'csv');
    const ledgers = await Promise.all(
      booked.map(async (uuid) => (await getCommissionLedger(storeFor('live'), merchant.id, uuid, true)).ledger as CommissionLedger),
    );
    const differences = await reportTotalsDifferences(storeFor('live'), merchant.id, ledgers);

    expect(json.code, json.stderr).toBe(0);
    expect(json.json.rows).toEqual(api.body.data.rows);
    expect(csv.stdout).toBe(
      'affiliate_slug,currency_code,orders,sales_value,accrued_value,reversed_value,net_value\nalice,EUR,2,29800,2980,0,2980\nbob,EUR,1,5000,500,0,500\n',
    );
    expect(differences).toEqual([]);
  });

  it('rebuilds the closed days and months from the ledgers, sealed, removes what they do not give, and leaves the open ones to the change feed', async () => {
    // Prepare: a merchant's October ledgers, carried into the totals; then the totals lose them, as ledgers written before the totals existed
    const [shop] = Object.values(
      await seed([
        merchantFixture({
          key: 'rebuild',
          affiliates: [{ slug: 'dora', name: 'Dora', email: 'dora@example.com', status: 'active' as const }],
        }),
      ]),
    ) as SeededMerchant[];
    const store = storeFor('live');
    const ledgers = [
      ledgerOf('dora', [accrual(1_000, '2025-10-02T10:00:00.000Z')], 10_000),
      ledgerOf(
        'dora',
        [accrual(2_000, '2025-10-31T23:00:00.000Z'), { type: 'reversal', amount: -2_000, at: '2025-11-01T01:00:00.000Z', version: 2 }],
        20_000,
      ),
      ledgerOf('dora', [accrual(3_000, new Date().toISOString())], 30_000),
    ];
    const today = new Date().toISOString().slice(0, 10);
    for (const ledger of ledgers) await book(shop as SeededMerchant, ledger);
    const query = { from: '2025-10-01', to: '2025-12-01', group_by: 'affiliate,day' };
    // Settled once the November reversal (the second version of a ledger) is in too.
    const before = await eventually(async () => {
      const response = await settled(shop as SeededMerchant, query, 2);
      return response.body.data.rows.length === 3 ? response : undefined;
    }, 15_000);
    await settled(
      shop as SeededMerchant,
      { from: today, to: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10), group_by: 'day' },
      1,
    );
    const totals = (
      await Promise.all(
        ['TOTALS', 'TOTALS#A'].map((suffix) =>
          store.ddb.send(
            new QueryCommand({
              TableName: store.table,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': `M#${shop?.id}#${suffix}` },
            }),
          ),
        ),
      )
    ).flatMap((answer) => answer.Items ?? []);
    for (const item of totals.filter((item) => String(item.sk).startsWith('D#2025-10-02') || String(item.sk).startsWith('M#2025-10')))
      await store.ddb.send(new DeleteCommand({ TableName: store.table, Key: { pk: item.pk, sk: item.sk } }));
    // A day the ledgers know nothing of.
    const bogus = {
      pk: `M#${shop?.id}#TOTALS#A`,
      sk: 'D#2025-10-15#dora#EUR',
      type: 'affiliate_totals',
      period: '2025-10-15',
      currency_code: 'EUR',
      affiliate_slug: 'dora',
      orders: 9,
      sales_value: 9,
      accrued_value: 9,
      reversed_value: 0,
    };
    await store.ddb.send(new PutCommand({ TableName: store.table, Item: bogus }));
    const checked = await runAdmin('check-totals', '--merchant', (shop as SeededMerchant).id);
    expect(checked.code, checked.stderr).toBe(0);
    expect(checked.json).toMatchObject({ stage: 'live', merchant_id: shop?.id, ledgers: 3 });
    expect(checked.json.differences.filter((line: string) => line.includes('2025-10-02'))).not.toEqual([]);
    expect(checked.json.differences.filter((line: string) => line.includes('2025-10-15'))).not.toEqual([]);
    expect(checked.json.differences.filter((line: string) => line.includes(today))).toEqual([]);

    // Act
    const rebuilt = await runAdmin('rebuild-totals', '--merchant', (shop as SeededMerchant).id);

    // Assess
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.json).toMatchObject({ stage: 'live', merchant_id: shop?.id, written: 10, removed: 1 });
    const sealed = async (sk: string) =>
      (await store.ddb.send(new GetCommand({ TableName: store.table, Key: { pk: `M#${shop?.id}#TOTALS#A`, sk } }))).Item?.applied_through;
    expect(await sealed('D#2025-10-02#dora#EUR')).toBe('sealed');
    const month = await store.ddb.send(
      new GetCommand({ TableName: store.table, Key: { pk: `M#${shop?.id}#TOTALS`, sk: 'M#2025-10#EUR' } }),
    );
    // A rebuilt month holds every entry booked in it: the totals reach through its end.
    expect(month.Item?.through).toBe('2025-11-01T00:00:00.000Z');
    expect(await sealed(`D#${today}#dora#EUR`)).toMatch(/^\d{40}$/);
    // A stream record still carrying an entry of a closed day (read again, replayed) adds nothing to it.
    const late = {
      kind: 'D' as const,
      period: '2025-10-02',
      affiliate_slug: 'dora',
      currency_code: 'EUR',
      orders: 1,
      sales_value: 1,
      accrued_value: 1,
      reversed_value: 0,
    };
    await applyLedgerWrites(store, shop?.id as string, [
      { seq: paddedSequence('9'.repeat(30)), deltas: [late], at: '2025-10-02T12:00:00.000Z' },
    ]);
    expect((await report(shop as SeededMerchant, query)).body.data.rows).toEqual(before.body.data.rows);
    expect((await report(shop as SeededMerchant, { ...query, group_by: 'month' })).body.data.rows).toEqual([
      expect.objectContaining({ period: '2025-10', orders: 2, sales_value: 30_000, accrued_value: 3_000, reversed_value: 0 }),
      expect.objectContaining({ period: '2025-11', orders: 0, accrued_value: 0, reversed_value: -2_000 }),
    ]);
    expect((await runAdmin('check-totals', '--merchant', (shop as SeededMerchant).id)).json.differences).toEqual([]);
  });

  it('refuses to check the totals of an unknown merchant: exit 1, one line on stderr', async () => {
    // Act
    const result = await runAdmin('check-totals', '--merchant', 'no-such-merchant');

    // Assess
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/merchant no-such-merchant does not exist/);
  });

  it('answers bad values with 422 keyed by field', async () => {
    const response = await report(merchant, { from: '2025-02-30', group_by: 'week', per_page: '500' });
    const reversed = await report(merchant, { from: '2025-12-01', to: '2025-11-01' });
    const tooLong = await report(merchant, { from: '2024-01-01', to: '2025-12-01' });

    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({
      from: ['The from field must match the format Y-m-d.'],
      group_by: ['The selected group by is invalid.'],
      per_page: ['The per page field must not be greater than 100.'],
    });
    expect(reversed.body.errors).toEqual({ to: ['The to field must be a date after from.'] });
    expect(tooLong.body.errors).toEqual({ to: ['The to field must be at most 366 days after from.'] });
  });
});
