import * as z from 'zod/mini';
import { queryBetween, queryItems, queryKey } from '#shared/db/query';
import { GSI1, type TableRef } from '#shared/db/table-def';
import { groupBy } from '#shared/group-by';
import { merchantPk, parseStored, refusedItem, updateItem } from './base';
import { batchDelete, batchPut } from './batch';

/** Commission totals per UTC day and month, merchant's and affiliates' (docs/reports.md#exactly-once-without-a-transaction). */

export const FIGURE_NAMES = ['orders', 'sales_value', 'accrued_value', 'reversed_value'] as const;
export type Figures = Record<(typeof FIGURE_NAMES)[number], number>;

/** A record of one value per figure. */
const eachFigure = <T>(value: (name: keyof Figures) => T) =>
  Object.fromEntries(FIGURE_NAMES.map((name) => [name, value(name)])) as Record<keyof Figures, T>;

export type PeriodKind = 'D' | 'M';

/** A sum past 2^53 comes back from the SDK as a BigInt: reported as the nearest number rather than refused. */
const figure = () => z.pipe(z.union([z.number(), z.bigint()]), z.transform(Number));

const figuresShape = eachFigure(figure);

// z.object keeps only these attributes: a parsed item is the report's row.
const totalsSchema = z.object({ ...figuresShape, period: z.string(), currency_code: z.string(), affiliate_rows: z.optional(z.number()) });
const affiliateTotalsSchema = z.object({ ...figuresShape, period: z.string(), currency_code: z.string(), affiliate_slug: z.string() });
const throughSchema = z.object({ through: z.optional(z.string()) });

const totalsPk = (merchantId: string) => `${merchantPk(merchantId)}#TOTALS`;
const affiliateTotalsPk = (merchantId: string) => `${merchantPk(merchantId)}#TOTALS#A`;
const affiliateIndexPk = (merchantId: string, slug: string) => `${affiliateTotalsPk(merchantId)}#${slug}`;

/** What a totals item sums over: one period of one kind, in one currency (and one affiliate's, with its slug). */
type Cell = { kind: PeriodKind; period: string; currency_code: string };
const merchantSk = (cell: Cell) => `${cell.kind}#${cell.period}#${cell.currency_code}`;
const affiliateSk = (cell: Cell & { affiliate_slug: string }) => `${cell.kind}#${cell.period}#${cell.affiliate_slug}#${cell.currency_code}`;
/** Where the feed kept the merchant's applied-through time before the newest month item carried it (read, no longer written). */
const AS_OF_SK = 'AS_OF';

/** Where an affiliate's day item is indexed for a report of that affiliate alone; month items are not. */
const affiliateIndexOf = (merchantId: string, cell: Cell & { affiliate_slug: string }) =>
  cell.kind === 'D' ? { gsi1pk: affiliateIndexPk(merchantId, cell.affiliate_slug), gsi1sk: merchantSk(cell) } : undefined;

/** Stream sequence numbers are decimal strings of up to 40 digits: padded, their string order is their numeric order. */
export const paddedSequence = (sequenceNumber: string) => sequenceNumber.padStart(40, '0');

/** One ledger write's contribution to one (affiliate, period, currency). */
export type TotalsDelta = Figures & Cell & { affiliate_slug: string };

/** One record's figures for one item (and, for a merchant item, the affiliate rows it created). */
type Contribution = { seq: string; figures: Figures; rows?: number };

const ADD_FIGURES = 'ADD orders :orders, sales_value :sales, accrued_value :accrued, reversed_value :reversed';
const SET_APPLIED =
  ' SET applied_through = :last, created_seq = if_not_exists(created_seq, :first), #type = :type, period = :period, currency_code = :currency';
const NONE_APPLIED = 'attribute_not_exists(applied_through) OR applied_through < :first';
const APPLIED_AS_READ = 'applied_through = :applied';

export const ZERO_FIGURES: Figures = eachFigure(() => 0);

export const addFigures = (a: Figures, b: Figures): Figures => eachFigure((name) => a[name] + b[name]);

/** The update's values for the sum of the contributions (with `:rows` when they count rows). */
const sumValues = (contributions: readonly Contribution[]) => {
  const figures = contributions.reduce((sum, contribution) => addFigures(sum, contribution.figures), ZERO_FIGURES);
  const rows = contributions.some((contribution) => contribution.rows !== undefined)
    ? { ':rows': contributions.reduce((sum, contribution) => sum + (contribution.rows ?? 0), 0) }
    : {};
  return {
    ':orders': figures.orders,
    ':sales': figures.sales_value,
    ':accrued': figures.accrued_value,
    ':reversed': figures.reversed_value,
    ...rows,
  };
};

/** How many times an item is written when it refuses as having applied some of the records. */
const ITEM_TRIES = 3;

/** Adds to one item the contributions it has not applied yet, in one conditional UpdateItem; returns the record that created the item. */
const addOnce = async (
  db: TableRef,
  key: { pk: string; sk: string },
  contributions: readonly Contribution[],
  item: { type: string; cell: Cell; set: string; add?: string; values?: Record<string, unknown> },
): Promise<string | undefined> => {
  let pending = contributions;
  let applied: string | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      const { Attributes } = await updateItem(db, {
        Key: key,
        UpdateExpression: `${ADD_FIGURES}${item.add ?? ''}${SET_APPLIED}${item.set}`,
        ConditionExpression: applied === undefined ? NONE_APPLIED : APPLIED_AS_READ,
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: {
          ...sumValues(pending),
          ':first': pending[0]?.seq,
          ':last': pending.at(-1)?.seq,
          ...(applied === undefined ? {} : { ':applied': applied }),
          ':type': item.type,
          ':period': item.cell.period,
          ':currency': item.cell.currency_code,
          ...item.values,
        },
        ReturnValues: 'UPDATED_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return Attributes?.created_seq as string | undefined;
    } catch (error) {
      const old = refusedItem(error);
      if (attempt >= ITEM_TRIES) throw error;
      applied = old?.applied_through as string | undefined;
      pending = pending.filter(({ seq }) => seq > (applied ?? ''));
      if (pending.length === 0) return old?.created_seq as string | undefined;
    }
  }
};

const latest = (values: readonly string[]) => [...values].sort().at(-1);

/** One ledger write of the stream: its sequence number (padded), what it adds, and when it was booked (ISO). */
export type LedgerWrite = { seq: string; deltas: readonly TotalsDelta[]; at: string };

/** Applies a batch's ledger writes of one merchant, each once: the affiliate items, then the merchant items, the newest month's last. */
export const applyLedgerWrites = async (db: TableRef, merchantId: string, writes: readonly LedgerWrite[]): Promise<void> => {
  const ordered = [...writes].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0));
  const touches = ordered.flatMap(({ seq, deltas }) => deltas.map((delta) => ({ seq, delta })));
  const createdBy = new Map<string, string | undefined>();
  await Promise.all(
    [...groupBy(touches, ({ delta }) => affiliateSk(delta))].map(async ([sk, group]) => {
      const { delta } = group[0] as (typeof group)[number];
      const index = affiliateIndexOf(merchantId, delta);
      const contributions = group.map(({ seq, delta: figures }) => ({ seq, figures }));
      const created = await addOnce(db, { pk: affiliateTotalsPk(merchantId), sk }, contributions, {
        type: 'affiliate_totals',
        cell: delta,
        // A month item written before months left the index leaves it at its next write.
        set: index ? ', affiliate_slug = :slug, gsi1pk = :gpk, gsi1sk = :gsk' : ', affiliate_slug = :slug REMOVE gsi1pk, gsi1sk',
        values: { ':slug': delta.affiliate_slug, ...(index ? { ':gpk': index.gsi1pk, ':gsk': index.gsi1sk } : {}) },
      });
      createdBy.set(sk, created);
    }),
  );
  const byMerchantItem = [...groupBy(touches, ({ delta }) => merchantSk(delta))];
  const newestMonth = latest(byMerchantItem.map(([sk]) => sk).filter((sk) => sk.startsWith('M#')));
  const through = latest(ordered.map((write) => write.at));
  const writeMerchantItem = ([sk, group]: (typeof byMerchantItem)[number]) => {
    const { delta } = group[0] as (typeof group)[number];
    const contributions = [...groupBy(group, ({ seq }) => seq)].map(([seq, touched]) => ({
      seq,
      figures: touched.reduce((sum, { delta: figures }) => addFigures(sum, figures), ZERO_FIGURES),
      rows: touched.filter(({ delta: own }) => createdBy.get(affiliateSk(own)) === seq).length,
    }));
    const last = sk === newestMonth;
    return addOnce(db, { pk: totalsPk(merchantId), sk }, contributions, {
      type: 'merchant_totals',
      cell: delta,
      set: last ? ', through = :through' : '',
      add: ', affiliate_rows :rows',
      ...(last ? { values: { ':through': through } } : {}),
    });
  };
  await Promise.all(byMerchantItem.filter(([sk]) => sk !== newestMonth).map(writeMerchantItem));
  await Promise.all(byMerchantItem.filter(([sk]) => sk === newestMonth).map(writeMerchantItem));
};

/** A rebuilt item's applied_through: above every stream sequence number (digits), so no record adds to it again. */
const SEALED = 'sealed';

/** One totals item as a rebuild writes it: an affiliate's, or the merchant's (a month's with `through` its end). */
export type TotalsItem = Figures & Cell & ({ affiliate_slug: string } | { affiliate_rows: number; through?: string });

const keyOfTotals = (merchantId: string, item: TotalsItem) =>
  'affiliate_slug' in item
    ? { pk: affiliateTotalsPk(merchantId), sk: affiliateSk(item) }
    : { pk: totalsPk(merchantId), sk: merchantSk(item) };

/** Replaces the totals of closed periods (an operator's rebuild): `items` put sealed, `stale` removed, those with `through` last. */
export const replaceClosedTotals = async (db: TableRef, merchantId: string, items: readonly TotalsItem[], stale: readonly TotalsItem[]) => {
  const stored = (item: TotalsItem) => {
    const { kind, ...figures } = item;
    const affiliate =
      'affiliate_slug' in item ? { type: 'affiliate_totals', ...affiliateIndexOf(merchantId, item) } : { type: 'merchant_totals' };
    return { ...keyOfTotals(merchantId, item), ...figures, ...affiliate, applied_through: SEALED };
  };
  const vouching = (item: TotalsItem) => 'through' in item && item.through !== undefined;
  await batchPut(db, items.filter((item) => !vouching(item)).map(stored));
  const staleKeys = stale.map((item) => keyOfTotals(merchantId, item));
  await batchDelete(db, staleKeys);
  await batchPut(db, items.filter(vouching).map(stored));
};

/** The merchant's totals items of one kind for periods in [from, to), compared as strings, in one Query. */
export const readMerchantTotals = async (db: TableRef, merchantId: string, kind: PeriodKind, from: string, to: string) => {
  const items = await queryBetween(db, totalsPk(merchantId), `${kind}#${from}`, `${kind}#${to}`);
  return items.map((item) => {
    const parsed = parseStored('merchant_totals', totalsSchema, item);
    return { ...parsed, affiliate_rows: parsed.affiliate_rows ?? 0 };
  });
};

/** How many of the newest month items a report reads for `through`: one per currency of that month, and more. */
const NEWEST_MONTH_ITEMS = 10;

/** How far the merchant's totals reach: the latest `through` of its newest month items and of the older `AS_OF` item. */
export const readTotalsAsOf = async (db: TableRef, merchantId: string): Promise<string | undefined> => {
  const pk = totalsPk(merchantId);
  const [kept, newest] = await Promise.all([
    queryKey(db, { pk, sk: AS_OF_SK }),
    queryBetween(db, pk, 'M#', 'M#~', { ProjectionExpression: 'through', ScanIndexForward: false }, NEWEST_MONTH_ITEMS),
  ]);
  const times = [...(kept ? [kept] : []), ...newest].flatMap((item) => parseStored('merchant_totals', throughSchema, item).through ?? []);
  return latest(times);
};

const toAffiliateTotals = (item: unknown) => parseStored('affiliate_totals', affiliateTotalsSchema, item);

/** Affiliate totals of one kind for periods in [from, to), at most `limit`; one affiliate's from the index, by day (the caller sums them). */
export const readAffiliateTotals = async (
  db: TableRef,
  merchantId: string,
  kind: PeriodKind,
  range: { from: string; to: string },
  options: { limit?: number; slug?: string; backward?: boolean } = {},
) => {
  if (options.slug !== undefined) {
    const days = kind === 'M' ? { from: `${range.from}-01`, to: `${range.to}-01` } : range;
    const items = await queryItems(db, {
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': affiliateIndexPk(merchantId, options.slug), ':from': `D#${days.from}`, ':to': `D#${days.to}` },
    });
    return items.map(toAffiliateTotals).map((item) => (kind === 'M' ? { ...item, period: item.period.slice(0, 7) } : item));
  }
  const order = { ScanIndexForward: options.backward !== true };
  const items = await queryBetween(db, affiliateTotalsPk(merchantId), `${kind}#${range.from}`, `${kind}#${range.to}`, order, options.limit);
  return items.map(toAffiliateTotals);
};
