import type { Attempt, Request } from './client';
import { isAmbiguous, isRetryable } from './client';
import type { SoakMerchant } from './fixtures';
import type { TextKind } from './texts';

/**
 * One logical operation of the soak and what it was told: the request (sent the same on every
 * retry), every attempt, what a correct service finally answers, its targets, and the ids its
 * answer showed. The helpers below read answers for the workload and the checks alike.
 */
export type OpKind =
  | 'create-v2'
  | 'create-legacy'
  | 'create-duplicate'
  | 'patch'
  | 'cancel'
  | 'cancel-refused'
  | 'get-order'
  | 'list-orders'
  | 'list-affiliates'
  | 'list-requests'
  | 'list-invites'
  | 'get-affiliate'
  | 'get-request'
  | 'invite'
  | 'invite-duplicate'
  | 'accept'
  | 'decline'
  | 'decide-again'
  | 'probe'
  | 'replay'
  | 'final-read';

/** Ids an answer showed the caller, for the tenant-isolation check. */
export type Seen = { orders: string[]; requests: string[]; affiliates: string[]; invites: string[] };

export type Op = {
  id: number;
  kind: OpKind;
  /** The caller: whose token was sent. */
  merchant: SoakMerchant;
  request: Request;
  attempts: Attempt[];
  /** What a correct service finally answers (a status). */
  expect: number;
  orderNo?: string;
  orderUuid?: string;
  requestUuid?: string;
  inviteEmail?: string;
  /** The shipping value a create or PATCH sent. */
  shipping?: number;
  /** Probes: the merchant whose resource was probed. */
  owner?: SoakMerchant;
  replayOf?: Op;
  /** A create whose text fields carry an odd text, or the largest body (texts.ts). */
  text?: TextKind;
  /** A create so large that 413 or 422 naming the reason is a right answer too (texts.ts, refusableRows). */
  refusable?: boolean;
  /** The uuid a create was answered 201 with. */
  createdUuid?: string;
  seen: Seen;
};

export const emptySeen = (): Seen => ({ orders: [], requests: [], affiliates: [], invites: [] });

/** The status the operation was finally told. */
export const finalStatus = (op: Op) => op.attempts[op.attempts.length - 1]?.status ?? 'error';
/** Attempts whose answer is final (not "try again", not missing). */
export const definitiveAttempts = (op: Op) => op.attempts.filter((attempt) => !isRetryable(attempt.status));
/** Whether some attempt may have been applied without the client learning its outcome. */
export const hadAmbiguousAttempt = (op: Op) => op.attempts.some((attempt) => isAmbiguous(attempt.status));
export const isKeyed = (op: Op) => op.request.idempotencyKey !== undefined;

export const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
export const array = (value: unknown): Record<string, unknown>[] => (Array.isArray(value) ? value.map(record) : []);
export const strings = (items: Record<string, unknown>[], field: string) =>
  items.map((item) => item[field]).filter((value): value is string => typeof value === 'string');

/** The uuid of the order a create's 201 names (V2: data.order.uuid; legacy: data.uuid). */
export const createdUuidOf = (json: unknown): string | undefined => {
  const data = record(record(json).data);
  const uuid = record(data.order).uuid ?? data.uuid;
  return typeof uuid === 'string' ? uuid : undefined;
};

/** `meta.pagination.total` of a list answer. */
export const totalOf = (json: unknown): number | undefined => {
  const total = record(record(record(json).meta).pagination).total;
  return typeof total === 'number' ? total : undefined;
};

/** The ids a successful answer shows, by resource. */
export const seenIn = (json: unknown): Seen => {
  const data = record(json).data;
  const body = record(data);
  const seen = emptySeen();
  seen.orders.push(...strings(array(body.orders), 'uuid'), ...strings([record(body.order)], 'uuid'));
  seen.affiliates.push(...strings(array(body.affiliates), 'slug'), ...strings([record(body.affiliate)], 'slug'));
  seen.requests.push(...strings([record(body.affiliate_request)], 'uuid'));
  seen.invites.push(...strings([record(body.invite)], 'uuid'));
  return seen;
};

/** Lists whose `data` is the array itself: which resource it holds. */
export const ARRAY_LISTS: Partial<Record<OpKind, keyof Seen>> = { 'list-requests': 'requests', 'list-invites': 'invites' };
