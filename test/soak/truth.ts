import { type AffiliateItem, parseAffiliate, tierBucket } from '#shared/db/entities/affiliate';
import { type AffiliateRequestItem, parseAffiliateRequest } from '#shared/db/entities/affiliate-request';
import { merchantPk } from '#shared/db/entities/base';
import { type CommissionLedger, getCommissionLedger } from '#shared/db/entities/commission';
import { countsPartition } from '#shared/db/entities/counter';
import { type InviteItem, parseInvite } from '#shared/db/entities/invite';
import { ALL_BUCKET } from '#shared/db/entities/list-entry';
import { type OrderItem, parseOrder } from '#shared/db/entities/order';
import { allSegments, type SegmentItem } from '#shared/db/entities/segment';
import { queryKeyPrefix } from '#shared/db/query';
import { INVITE_NEEDLE, type SoakMerchant } from './fixtures';
import { type Op, totalOf } from './ops';
import { runOp } from './workload';

/**
 * The ground truth after the run: every item of each merchant read straight from its stage's
 * table through the operator store (never faulted), and every list of each merchant read through
 * the API page by page (faulted like any request, so through the retrying client), to compare.
 */

export type ListReading = {
  /** The list and its filter, as the report names it. */
  name: string;
  path: string;
  /** meta.pagination.total of each page read. */
  totals: number[];
  /** The ids the pages showed, in order (duplicates kept). */
  ids: string[];
  /** The ids the table holds for this list. */
  expected: string[];
  /** Why the list could not be read to the end. */
  failed?: string;
  /** When a total is wrong: the list's block count items as stored, to tell a recount still owed from a count lost. */
  counts?: string[];
};

export type MerchantTruth = {
  merchant: SoakMerchant;
  orders: OrderItem[];
  affiliates: AffiliateItem[];
  requests: AffiliateRequestItem[];
  invites: InviteItem[];
  segments: SegmentItem[];
  /** The commission ledger of each order (undefined: none). */
  ledgers: Map<string, CommissionLedger | undefined>;
  lists: ListReading[];
};

const PER_PAGE = 100;
const LEDGER_READS_IN_PARALLEL = 16;

/** Every item of one kind in the merchant's partition (a key range on `sk`, never a Scan). */
const itemsOf = async <T>(merchant: SoakMerchant, prefix: string, parse: (raw: unknown) => T): Promise<T[]> =>
  (await queryKeyPrefix(merchant.store, merchantPk(merchant.id), prefix)).map(parse);

const readLedgers = async (merchant: SoakMerchant, orders: readonly OrderItem[]) => {
  const ledgers = new Map<string, CommissionLedger | undefined>();
  let next = 0;
  const lane = async () => {
    while (next < orders.length) {
      const order = orders[next++] as OrderItem;
      ledgers.set(order.uuid, (await getCommissionLedger(merchant.store, merchant.id, order.uuid, true)).ledger);
    }
  };
  await Promise.all(Array.from({ length: LEDGER_READS_IN_PARALLEL }, lane));
  return ledgers;
};

/** `counts`: the sort key prefix of the list's block count items (shared/db/entities/counter.ts). */
type ListDef = { name: string; path: string; idsOf: (json: unknown) => string[]; expected: string[]; counts: string };

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const idsAt = (items: unknown, field: string): string[] =>
  Array.isArray(items) ? items.map((item) => record(item)[field]).filter((id): id is string => typeof id === 'string') : [];

/** Every list (and filter) the API has for a merchant, with the ids the table says it must show. */
const listsOf = (truth: Omit<MerchantTruth, 'lists' | 'ledgers' | 'merchant' | 'segments'>): ListDef[] => {
  const orders = (json: unknown) => idsAt(record(record(json).data).orders, 'uuid');
  const affiliates = (json: unknown) => idsAt(record(record(json).data).affiliates, 'slug');
  const arrayData = (json: unknown) => idsAt(record(json).data, 'uuid');
  const requestsIn = (statuses: string[]) => truth.requests.filter((request) => statuses.includes(request.status)).map((r) => r.uuid);
  const requestLists = [['pending'], ['accepted'], ['declined'], ['pending', 'accepted', 'declined']].map((statuses) => ({
    name: `affiliate-requests status=${statuses.join(',')}`,
    path: `/api/v2/affiliate-requests?status=${statuses.join(',')}`,
    idsOf: arrayData,
    expected: requestsIn(statuses),
    counts: 'affiliate_requests#',
  }));
  const tiers = [...new Set(truth.affiliates.map((affiliate) => affiliate.tier_slug).filter((tier): tier is string => tier !== null))];
  return [
    { name: 'orders', path: '/api/v2/orders?', idsOf: orders, expected: truth.orders.map((order) => order.uuid), counts: 'orders#' },
    {
      name: 'affiliates',
      path: '/api/v2/affiliates?',
      idsOf: affiliates,
      expected: truth.affiliates.map((affiliate) => affiliate.slug),
      counts: `affiliates#${ALL_BUCKET}#`,
    },
    ...tiers.sort().map((tier) => ({
      name: `affiliates tier_slug=${tier}`,
      path: `/api/v2/affiliates?tier_slug=${tier}`,
      idsOf: affiliates,
      expected: truth.affiliates.filter((affiliate) => affiliate.tier_slug === tier).map((affiliate) => affiliate.slug),
      counts: `affiliates#${encodeURIComponent(tierBucket(tier))}#`,
    })),
    ...requestLists,
    {
      name: 'invites',
      path: '/api/v2/affiliates/invites?',
      idsOf: arrayData,
      expected: truth.invites.map((invite) => invite.uuid),
      counts: 'invites#',
    },
    {
      name: `invites email=${INVITE_NEEDLE}`,
      path: `/api/v2/affiliates/invites?email=${INVITE_NEEDLE}`,
      idsOf: arrayData,
      expected: truth.invites.filter((invite) => invite.email.includes(INVITE_NEEDLE)).map((invite) => invite.uuid),
      counts: 'invites#',
    },
  ];
};

/** Reads one list to its end through the API; every page is recorded as a `final-read` operation. */
const readList = async (merchant: SoakMerchant, list: ListDef, log: (op: Op) => void): Promise<ListReading> => {
  const reading: ListReading = { name: list.name, path: list.path, totals: [], ids: [], expected: list.expected };
  const separator = list.path.endsWith('?') ? '' : '&';
  for (let page = 1; ; page++) {
    const op: Op = {
      id: -1,
      kind: 'final-read',
      merchant,
      request: {
        url: merchant.url,
        token: merchant.token,
        method: 'GET',
        path: `${list.path}${separator}per_page=${PER_PAGE}&page=${page}`,
      },
      attempts: [],
      expect: 200,
      seen: { orders: [], requests: [], affiliates: [], invites: [] },
    };
    log(op);
    const response = await runOp(op, undefined);
    if (response.last.status !== 200) {
      reading.failed = `page ${page}: ${response.last.status}`;
      return reading;
    }
    const total = totalOf(response.json);
    if (total !== undefined) reading.totals.push(total);
    const ids = list.idsOf(response.json);
    reading.ids.push(...ids);
    // The last page is the short one; a total that is too small ends the list early, which is the point.
    if (ids.length < PER_PAGE || page > (total ?? 0) / PER_PAGE + 1) return reading;
  }
};

/** A list's count items as stored: each block's or group's count, version, last change and pending recount mark. */
const countItemsOf = async (merchant: SoakMerchant, prefix: string): Promise<string[]> =>
  (await queryKeyPrefix(merchant.store, countsPartition(merchant.id), prefix)).map((item) =>
    ['sk', 'n', 'v', 'changed_at', 'marked_at'].map((field) => `${field}=${String(item[field] ?? '-')}`).join(' '),
  );

/** The ground truth of one merchant, and its lists as the API shows them. */
export const readTruth = async (merchant: SoakMerchant, log: (op: Op) => void): Promise<MerchantTruth> => {
  const [orders, affiliates, requests, invites, segments] = await Promise.all([
    itemsOf(merchant, 'ORDER#', parseOrder),
    itemsOf(merchant, 'AFFILIATE#', parseAffiliate),
    itemsOf(merchant, 'AREQ#', parseAffiliateRequest),
    itemsOf(merchant, 'INVITE#', parseInvite),
    allSegments(merchant.store, merchant.id),
  ]);
  const ledgers = await readLedgers(merchant, orders);
  const lists: ListReading[] = [];
  for (const list of listsOf({ orders, affiliates, requests, invites })) {
    const reading = await readList(merchant, list, log);
    if (reading.totals.some((total) => total !== list.expected.length)) reading.counts = await countItemsOf(merchant, list.counts);
    lists.push(reading);
  }
  return { merchant, orders, affiliates, requests, invites, segments, ledgers, lists };
};
