import { randomUUID } from 'node:crypto';
import { seededRandom } from '#local/faults';
import type { Request } from './client';
import { INVITE_NEEDLE, type SoakMerchant } from './fixtures';
import { emptySeen, finalStatus, type Op, type OpKind } from './ops';
import {
  fill,
  isLarge,
  LARGE_TEXT_KINDS,
  LARGE_TEXTS,
  type LargeText,
  MAX_ROWS,
  ODD_TEXT_KINDS,
  type OddText,
  oddField,
  refusableRows,
  type TextKind,
} from './texts';

/**
 * The plan of the mixed workload: what each merchant's model knows (orders it was answered 201
 * for, requests still pending, invited e-mails, keyed operations to replay), the seeded PRNG, the
 * mix of kinds by weight, and one planner per kind that picks a fit target and builds the request.
 * A planner returns undefined when the merchant has no fit target; the plan then creates an order.
 */
export type OrderState = {
  uuid: string;
  orderNo: string;
  seeded?: 'plain' | 'paid' | 'old';
  /** A cancel of it was answered 200. */
  cancelled: boolean;
  /** A cancel of it was sent (a second one would expect 422). */
  cancelSent: boolean;
};

/** What the workload knows of one merchant, to pick fit targets. */
export type MerchantModel = {
  merchant: SoakMerchant;
  orders: OrderState[];
  pending: string[];
  decided: string[];
  invited: string[];
  /** Keyed operations with a final answer, for deliberate replays. */
  keyedDone: Op[];
  serial: number;
};

export const createModel = (merchant: SoakMerchant): MerchantModel => ({
  merchant,
  orders: merchant.seededOrders.map((order) => ({
    uuid: order.uuid,
    orderNo: order.orderNo,
    seeded: order.kind,
    cancelled: false,
    cancelSent: order.kind !== 'plain',
  })),
  pending: [...merchant.pendingRequests.keys()],
  decided: [...merchant.decidedRequests],
  invited: [...merchant.seededInvites],
  keyedDone: [],
  serial: 0,
});

// ---------------------------------------------------------------------------------------------
// The seeded PRNG (the faults' own): the plan's choices and bodies.
export type Rng = () => number;
export const createRng = (seed: number): Rng => seededRandom(seed);
const int = (rng: Rng, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));
const pick = <T>(rng: Rng, items: readonly T[]): T | undefined => items[Math.floor(rng() * items.length)];
const chance = (rng: Rng, p: number) => rng() < p;

// ---------------------------------------------------------------------------------------------
// The mix. Weights are relative; an operation whose target is missing falls back to a V2 create.
const WEIGHTS: readonly [PlannedKind, number][] = [
  ['create-v2', 22],
  ['create-legacy', 8],
  ['create-duplicate', 1.5],
  ['create-odd', 1.5],
  ['create-large', 0.3],
  ['patch', 10],
  ['cancel', 6],
  ['cancel-refused', 1],
  ['get-order', 8],
  ['list-orders', 6],
  ['list-affiliates', 4],
  ['list-requests', 5],
  ['list-invites', 3],
  ['get-affiliate', 2],
  ['get-request', 2],
  ['invite', 4],
  ['invite-duplicate', 1],
  ['accept', 3],
  ['decline', 3],
  ['decide-again', 0.5],
  ['probe', 4],
  ['replay', 4],
];
const TOTAL_WEIGHT = WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);

/** The share of operations that decide a request: how many pending requests to seed. */
export const DECISION_SHARE = (3 + 3) / TOTAL_WEIGHT;
/** Share of writes whose first attempt the client abandons early (its answer lost to it). */
const EARLY_TIMEOUT_SHARE = 0.03;
/** PATCH values a probe (another merchant's token) sends: no legitimate PATCH uses them. */
export const PROBE_SHIPPING_BASE = 9_000_000;

/** Kinds left out of the mix by `--plain` (a baseline without the odd and the largest texts). */
const TEXT_KINDS: ReadonlySet<PlannedKind> = new Set<PlannedKind>(['create-odd', 'create-large']);

const drawKind = (rng: Rng, plain: boolean): PlannedKind => {
  const weights = plain ? WEIGHTS.filter(([kind]) => !TEXT_KINDS.has(kind)) : WEIGHTS;
  let roll = rng() * weights.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [kind, weight] of weights) {
    roll -= weight;
    if (roll < 0) return kind;
  }
  return 'create-v2';
};

type Plan = Omit<Op, 'id' | 'attempts' | 'seen' | 'merchant'> & { locks?: string[] };

const request = (model: MerchantModel, method: Request['method'], path: string, body?: unknown, keyed = false): Request => ({
  url: model.merchant.url,
  token: model.merchant.token,
  method,
  path,
  ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  ...(keyed ? { idempotencyKey: randomUUID() } : {}),
});

const orderBody = (rng: Rng, model: MerchantModel, orderNo: string, shipping: number) => {
  const { merchant } = model;
  const rows = Array.from({ length: int(rng, 1, 3) }, (_, index) => ({
    product_name: `Product ${index}`,
    price_value: int(rng, 100, 50_000),
    quantity: int(rng, 1, 3),
    ...(chance(rng, 0.5) ? { product_sku: `SKU-${int(rng, 1, 40)}` } : {}),
    ...(chance(rng, 0.5) ? { tax_value: int(rng, 0, 5_000) } : {}),
    ...(chance(rng, 0.3) ? { segment_slug: chance(rng, 0.8) ? 'shoes' : 'no-such-segment' } : {}),
  }));
  return {
    affiliate_slug: pick(rng, merchant.activeSlugs) ?? '',
    order_no: orderNo,
    total_shipping_value: shipping,
    currency_code: 'EUR',
    // A small pool of customers per merchant: their upserts race like a real shop's regulars.
    ...(chance(rng, 0.8) ? { customer: { name: 'Customer', email: `customer-${int(rng, 0, 20)}@${merchant.domain}` } } : {}),
    order_rows: rows,
  };
};

/** An order whose text fields carry an odd text (rows, SKU, customer name, and half the time its order_no). */
export const oddOrderBody = (rng: Rng, model: MerchantModel, orderNo: string, shipping: number, kind: OddText) => {
  const body = orderBody(rng, model, orderNo, shipping);
  return {
    ...body,
    customer: { name: oddField('Customer', kind), email: `customer-${int(rng, 0, 20)}@${model.merchant.domain}` },
    order_rows: body.order_rows.map((row, index) => ({
      ...row,
      product_name: oddField(`Product ${index}`, kind),
      product_sku: oddField('SKU', kind),
    })),
  };
};

/** The largest order the API accepts: 200 rows whose every text field is 255 code units of one character. */
export const largeOrderBody = (rng: Rng, model: MerchantModel, orderNo: string, shipping: number, kind: LargeText) => {
  const text = fill(LARGE_TEXTS[kind]);
  return {
    affiliate_slug: pick(rng, model.merchant.activeSlugs) ?? '',
    order_no: orderNo,
    total_shipping_value: shipping,
    currency_code: 'EUR',
    customer: { name: text, email: `customer-${int(rng, 0, 20)}@${model.merchant.domain}` },
    order_rows: Array.from({ length: MAX_ROWS }, () => ({
      product_name: text,
      product_sku: text,
      // Matches no segment: the default segment's rates apply.
      segment_slug: text,
      price_value: int(rng, 100, 50_000),
      tax_value: int(rng, 0, 5_000),
      quantity: int(rng, 1, 3),
    })),
  };
};

/** Orders that exist for sure (seeded or answered 201) and are not being worked on. */
const freeOrders = (model: MerchantModel, locks: Set<string>, fits: (order: OrderState) => boolean) =>
  model.orders.filter((order) => !locks.has(order.uuid) && fits(order));

const planCreate = (rng: Rng, model: MerchantModel, kind: 'create-v2' | 'create-legacy', text?: TextKind): Plan => {
  const serial = ++model.serial;
  const plainNo = `${model.merchant.key}-${kind === 'create-v2' ? 'v2' : 'lg'}-${serial}`;
  const odd = text !== undefined && !isLarge(text) ? text : undefined;
  // Half the odd orders carry the odd text in their order_no too (between two plain parts: nothing for trim to take).
  const orderNo = odd !== undefined && chance(rng, 0.5) ? `${plainNo}-${oddField('no', odd)}-x` : plainNo;
  const shipping = int(rng, 0, 2_000);
  const path = kind === 'create-v2' ? '/api/v2/orders/create' : '/api/orders/create';
  const body =
    text === undefined
      ? orderBody(rng, model, orderNo, shipping)
      : isLarge(text)
        ? largeOrderBody(rng, model, orderNo, shipping, text)
        : oddOrderBody(rng, model, orderNo, shipping, text);
  const built = request(model, 'POST', path, body, chance(rng, 0.5));
  return {
    kind,
    request: built,
    expect: 201,
    orderNo,
    shipping,
    ...(text === undefined ? {} : { text }),
    ...(refusableRows((body as { order_rows?: unknown }).order_rows) ? { refusable: true } : {}),
  };
};

const planTextCreate = (rng: Rng, model: MerchantModel, kinds: readonly TextKind[]) =>
  planCreate(rng, model, chance(rng, 0.7) ? 'create-v2' : 'create-legacy', pick(rng, kinds));

/** Kinds the plan draws: an odd or large create is recorded as the V2 or legacy create it is. */
type PlannedKind = Exclude<OpKind, 'final-read'> | 'create-odd' | 'create-large';

const planners: Record<PlannedKind, (rng: Rng, model: MerchantModel, all: MerchantModel[], locks: Set<string>) => Plan | undefined> = {
  'create-v2': (rng, model) => planCreate(rng, model, 'create-v2'),
  'create-legacy': (rng, model) => planCreate(rng, model, 'create-legacy'),
  'create-odd': (rng, model) => planTextCreate(rng, model, ODD_TEXT_KINDS),
  'create-large': (rng, model) => planTextCreate(rng, model, LARGE_TEXT_KINDS),
  'create-duplicate': (rng, model) => {
    const taken = pick(rng, model.orders);
    if (!taken) return undefined;
    const v2 = chance(rng, 0.5);
    return {
      kind: 'create-duplicate',
      request: request(
        model,
        'POST',
        v2 ? '/api/v2/orders/create' : '/api/orders/create',
        orderBody(rng, model, taken.orderNo, 0),
        chance(rng, 0.5),
      ),
      expect: 422,
      orderNo: taken.orderNo,
    };
  },
  patch: (rng, model, _all, locks) => {
    const order = pick(
      rng,
      freeOrders(model, locks, (candidate) => !candidate.cancelled && !candidate.cancelSent),
    );
    if (!order) return undefined;
    const shipping = int(rng, 0, 99_999);
    return {
      kind: 'patch',
      request: request(model, 'PATCH', `/api/v2/orders/${order.uuid}`, { total_shipping_value: shipping }),
      expect: 200,
      orderUuid: order.uuid,
      shipping,
      locks: [order.uuid],
    };
  },
  cancel: (rng, model, _all, locks) => {
    const order = pick(
      rng,
      freeOrders(model, locks, (candidate) => !candidate.cancelSent),
    );
    if (!order) return undefined;
    order.cancelSent = true;
    return {
      kind: 'cancel',
      request: request(model, 'POST', `/api/v2/orders/${order.uuid}/cancel`, undefined, chance(rng, 0.5)),
      expect: 200,
      orderUuid: order.uuid,
      locks: [order.uuid],
    };
  },
  'cancel-refused': (rng, model, _all, locks) => {
    // Already cancelled, linked to a payment or too old: 422, and the order unchanged.
    const order = pick(
      rng,
      freeOrders(model, locks, (candidate) => candidate.cancelled || candidate.seeded === 'paid' || candidate.seeded === 'old'),
    );
    if (!order) return undefined;
    return {
      kind: 'cancel-refused',
      request: request(model, 'POST', `/api/v2/orders/${order.uuid}/cancel`, undefined, chance(rng, 0.5)),
      expect: 422,
      orderUuid: order.uuid,
      locks: [order.uuid],
    };
  },
  'get-order': (rng, model) => {
    const order = pick(rng, model.orders);
    if (!order) return undefined;
    return { kind: 'get-order', request: request(model, 'GET', `/api/v2/orders/${order.uuid}`), expect: 200, orderUuid: order.uuid };
  },
  'list-orders': (rng, model) => {
    const perPage = pick(rng, [15, 50, 100]) ?? 15;
    const page = chance(rng, 0.7) ? 1 : int(rng, 2, Math.max(2, Math.ceil(model.orders.length / perPage)));
    return { kind: 'list-orders', request: request(model, 'GET', `/api/v2/orders?per_page=${perPage}&page=${page}`), expect: 200 };
  },
  'list-affiliates': (rng, model) => {
    const tier = chance(rng, 0.5) ? `&tier_slug=${pick(rng, model.merchant.tiers)}` : '';
    return { kind: 'list-affiliates', request: request(model, 'GET', `/api/v2/affiliates?per_page=50&page=1${tier}`), expect: 200 };
  },
  'list-requests': (rng, model) => {
    const status = pick(rng, ['pending', 'accepted', 'declined', 'pending,declined', 'pending,accepted,declined']) ?? 'pending';
    const page = chance(rng, 0.7) ? 1 : int(rng, 2, 4);
    return {
      kind: 'list-requests',
      request: request(model, 'GET', `/api/v2/affiliate-requests?status=${status}&per_page=25&page=${page}`),
      expect: 200,
    };
  },
  'list-invites': (rng, model) => {
    const filter = chance(rng, 0.3) ? `&email=${INVITE_NEEDLE}` : '';
    return { kind: 'list-invites', request: request(model, 'GET', `/api/v2/affiliates/invites?per_page=25&page=1${filter}`), expect: 200 };
  },
  'get-affiliate': (rng, model) => {
    const slug = pick(rng, model.merchant.activeSlugs) ?? '';
    return { kind: 'get-affiliate', request: request(model, 'GET', `/api/v2/affiliates/${slug}`), expect: 200 };
  },
  'get-request': (rng, model) => {
    const uuid = pick(rng, [...model.pending, ...model.decided]);
    if (!uuid) return undefined;
    return { kind: 'get-request', request: request(model, 'GET', `/api/v2/affiliate-requests/${uuid}`), expect: 200, requestUuid: uuid };
  },
  invite: (rng, model) => {
    const email = `invitee-${++model.serial}${chance(rng, 0.2) ? `-${INVITE_NEEDLE}` : ''}@${model.merchant.domain}`;
    const body = { email, sender_email: model.merchant.sender, content: 'Join our partner program!' };
    return {
      kind: 'invite',
      request: request(model, 'POST', '/api/v2/affiliates/invite', body, chance(rng, 0.5)),
      expect: 200,
      inviteEmail: email,
    };
  },
  'invite-duplicate': (rng, model) => {
    const email = pick(rng, model.invited);
    if (!email) return undefined;
    const body = { email, sender_email: model.merchant.sender };
    return {
      kind: 'invite-duplicate',
      request: request(model, 'POST', '/api/v2/affiliates/invite', body, chance(rng, 0.5)),
      expect: 422,
      inviteEmail: email,
    };
  },
  accept: (rng, model) => planDecision(rng, model, 'accept'),
  decline: (rng, model) => planDecision(rng, model, 'decline'),
  'decide-again': (rng, model, _all, locks) => {
    const uuid = pick(
      rng,
      model.decided.filter((candidate) => !locks.has(candidate)),
    );
    if (!uuid) return undefined;
    const decision = chance(rng, 0.5) ? 'accept' : 'decline';
    return {
      kind: 'decide-again',
      request: request(model, 'POST', `/api/v2/affiliate-requests/${uuid}/${decision}`, undefined, chance(rng, 0.5)),
      expect: 422,
      requestUuid: uuid,
      locks: [uuid],
    };
  },
  probe: (rng, model, all) => planProbe(rng, model, all),
  replay: (rng, model, _all, locks) => {
    const original = pick(rng, model.keyedDone);
    if (!original) return undefined;
    const target = original.orderUuid ?? original.requestUuid;
    if (target && locks.has(target)) return undefined;
    return {
      kind: 'replay',
      request: { ...original.request, firstTimeoutMs: undefined },
      expect: finalStatus(original) as number,
      replayOf: original,
      orderNo: original.orderNo,
      orderUuid: original.orderUuid,
      requestUuid: original.requestUuid,
      inviteEmail: original.inviteEmail,
      shipping: original.shipping,
      locks: target ? [target] : [],
    };
  },
};

const planDecision = (rng: Rng, model: MerchantModel, decision: 'accept' | 'decline'): Plan | undefined => {
  const index = Math.floor(rng() * model.pending.length);
  const uuid = model.pending[index];
  if (!uuid) return undefined;
  model.pending.splice(index, 1);
  return {
    kind: decision,
    request: request(model, 'POST', `/api/v2/affiliate-requests/${uuid}/${decision}`, undefined, chance(rng, 0.5)),
    expect: 200,
    requestUuid: uuid,
    locks: [uuid],
  };
};

/**
 * Another merchant's resource with this merchant's token: a correct service answers 404 and
 * changes nothing. Mostly a merchant of the same stage; sometimes one of the other stage (its
 * uuid sent to this stage). PATCH probes send a value no legitimate PATCH sends.
 */
const planProbe = (rng: Rng, model: MerchantModel, all: MerchantModel[]): Plan | undefined => {
  const sameStage = all.filter((other) => other !== model && other.merchant.stage === model.merchant.stage);
  const otherStage = all.filter((other) => other.merchant.stage !== model.merchant.stage);
  const victim = chance(rng, 0.8) && sameStage.length > 0 ? pick(rng, sameStage) : pick(rng, otherStage);
  if (!victim) return undefined;
  const order = pick(rng, victim.orders);
  const requestUuid = pick(rng, [...victim.pending, ...victim.decided]);
  const base = { kind: 'probe' as const, expect: 404, owner: victim.merchant };
  switch (int(rng, 0, 6)) {
    case 0:
      return order && { ...base, request: request(model, 'GET', `/api/v2/orders/${order.uuid}`), orderUuid: order.uuid };
    case 1: {
      if (!order) return undefined;
      const shipping = PROBE_SHIPPING_BASE + int(rng, 0, 999_999);
      return {
        ...base,
        request: request(model, 'PATCH', `/api/v2/orders/${order.uuid}`, { total_shipping_value: shipping }),
        orderUuid: order.uuid,
        shipping,
      };
    }
    case 2:
      return order && { ...base, request: request(model, 'POST', `/api/v2/orders/${order.uuid}/cancel`), orderUuid: order.uuid };
    case 3:
    case 4:
    case 5: {
      if (!requestUuid) return undefined;
      const action = ['', '/accept', '/decline'][int(rng, 0, 2)] ?? '';
      return {
        ...base,
        request: request(model, action ? 'POST' : 'GET', `/api/v2/affiliate-requests/${requestUuid}${action}`),
        requestUuid,
      };
    }
    default: {
      const slug = pick(rng, victim.merchant.activeSlugs) ?? '';
      return { ...base, request: request(model, 'GET', `/api/v2/affiliates/${slug}`) };
    }
  }
};

export type WorkloadState = { models: MerchantModel[]; locks: Set<string>; rng: Rng; nextId: number; plain: boolean };

/** Plans one operation for a random merchant; falls back to a V2 create when the drawn kind has no fit target. */
export const planOp = (state: WorkloadState): { op: Op; model: MerchantModel; locks: string[] } => {
  const { rng, models, locks } = state;
  const model = pick(rng, models) as MerchantModel;
  const kind = drawKind(rng, state.plain);
  const plan = planners[kind as PlannedKind](rng, model, models, locks) ?? planCreate(rng, model, 'create-v2');
  const { locks: wanted = [], ...rest } = plan;
  const write = rest.request.method !== 'GET' && rest.kind !== 'replay';
  if (write && chance(rng, EARLY_TIMEOUT_SHARE)) rest.request.firstTimeoutMs = int(rng, 20, 250);
  return { op: { ...rest, id: state.nextId++, merchant: model.merchant, attempts: [], seen: emptySeen() }, model, locks: wanted };
};
