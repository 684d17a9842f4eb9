import * as z from 'zod/mini';
import { type TableRef, TTL_ATTRIBUTE } from '#shared/db/table-def';
import { busy } from '#shared/errors';
import { getStored, itemKey, type Key, parseStored, putItem, refusedItem, updateApplied } from './base';

/** One `Idempotency-Key` of a merchant: claimed, then completed or released by its `claim_id` (docs/design-notes.md#idempotency-key). */
export const idempotencyKey = (merchantId: string, key: string): Key => itemKey(merchantId, `IDEMPOTENCY#${key}`);

export const RECORD_TTL_SECONDS = 24 * 60 * 60;

const IN_PROGRESS = 'in_progress';
const COMPLETED = 'completed';

/** A stored response; `sealedFields` are the paths (keys from the body's root) of the body's values stored sealed. */
export type StoredResponse = { statusCode: number; headers: Record<string, string>; body: string; sealedFields?: string[][] };

type IdempotencyRecord =
  | { status: typeof IN_PROGRESS; fingerprint: string; inFlightUntil: number; expiresAt: number; claimId?: string; traceId?: string }
  | { status: typeof COMPLETED; fingerprint: string; response: StoredResponse; expiresAt: number };

/** The right to run the request, held by the invocation that wrote the `in_progress` record. */
export type Claim = { merchantId: string; key: string; claimId: string; fingerprint: string };

/** Claimed, or the record that holds the key (`dead`: an in-progress claim of this same request whose lease ran out, to take over). */
type ClaimOutcome = { claimed: true; claim: Claim } | { claimed: false; record: IdempotencyRecord; dead?: boolean };
type InProgress = Extract<IdempotencyRecord, { status: typeof IN_PROGRESS }>;

const isExpired = (record: IdempotencyRecord, nowMs = Date.now()): boolean => record.expiresAt <= Math.floor(nowMs / 1000);

/** A record that still answers for its key: within its 24 hours, and not in progress with its lease run out. */
const isLive = (record: IdempotencyRecord, nowMs = Date.now()): boolean =>
  !isExpired(record, nowMs) && (record.status !== IN_PROGRESS || record.inFlightUntil >= nowMs);

const recordSchema = z.discriminatedUnion('status', [
  z.looseObject({
    status: z.literal(IN_PROGRESS),
    fingerprint: z.string(),
    [TTL_ATTRIBUTE]: z.number(),
    in_flight_until: z.number(),
    claim_id: z.optional(z.string()),
    trace_id: z.optional(z.string()),
  }),
  z.looseObject({
    status: z.literal(COMPLETED),
    fingerprint: z.string(),
    [TTL_ATTRIBUTE]: z.number(),
    response_status: z.number(),
    response_headers: z.record(z.string(), z.string()),
    response_body: z.string(),
    response_sealed: z.optional(z.array(z.array(z.string()))),
  }),
]);

const toRecord = (item: z.output<typeof recordSchema>): IdempotencyRecord => {
  const base = { fingerprint: item.fingerprint, expiresAt: item[TTL_ATTRIBUTE] };
  return item.status === COMPLETED
    ? {
        ...base,
        status: COMPLETED,
        response: {
          statusCode: item.response_status,
          headers: item.response_headers,
          body: item.response_body,
          ...(item.response_sealed?.length ? { sealedFields: item.response_sealed } : {}),
        },
      }
    : { ...base, status: IN_PROGRESS, inFlightUntil: item.in_flight_until, claimId: item.claim_id, traceId: item.trace_id };
};

/** The merchant's record for `key`, or undefined when there is none or it no longer counts. */
export const readRecord = async (db: TableRef, merchantId: string, key: string, nowMs = Date.now()) => {
  const item = await getStored(db, 'idempotency', recordSchema, idempotencyKey(merchantId, key), true);
  const record = item && toRecord(item);
  return record && isLive(record, nowMs) ? record : undefined;
};

const CLAIM_ATTEMPTS = 3;

/** Claims `key` for `leaseMs` in one conditional PutItem, or answers the record that holds it (`dead`: this request's claim, for `takeOverKey`). */
export const claimKey = async (db: TableRef, request: Claim & { leaseMs: number; traceId: string }): Promise<ClaimOutcome> => {
  const { merchantId, key, fingerprint, leaseMs, claimId, traceId } = request;
  const claim: Claim = { merchantId, key, claimId, fingerprint };
  for (let attempt = 1; ; attempt++) {
    const nowMs = Date.now();
    try {
      await putItem(db, {
        Item: {
          ...idempotencyKey(merchantId, key),
          type: 'idempotency',
          status: IN_PROGRESS,
          fingerprint,
          claim_id: claim.claimId,
          trace_id: traceId,
          in_flight_until: nowMs + leaseMs,
          [TTL_ATTRIBUTE]: Math.floor(nowMs / 1000) + RECORD_TTL_SECONDS,
          created_at: new Date(nowMs).toISOString(),
        },
        ConditionExpression: 'attribute_not_exists(pk) OR #expires <= :nowSeconds',
        ExpressionAttributeNames: { '#expires': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':nowSeconds': Math.floor(nowMs / 1000) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return { claimed: true, claim };
    } catch (error) {
      // The record that made the condition fail.
      const old = refusedItem(error);
      const held = old ? toRecord(parseStored('idempotency', recordSchema, old)) : await readRecord(db, merchantId, key);
      if (held?.status === IN_PROGRESS && held.claimId === claim.claimId) return { claimed: true, claim };
      if (held && (isLive(held) || (held.fingerprint !== fingerprint && !isExpired(held)))) return { claimed: false, record: held };
      if (held?.status === IN_PROGRESS && !isExpired(held)) return { claimed: false, record: held, dead: true };
      // It expired between the write and the read: try again, then give up for now.
      if (attempt >= CLAIM_ATTEMPTS) throw busy();
    }
  }
};

/** Takes over this request's `dead` claim while it is still that claim, storing `response` or claiming it anew; false when the record changed. */
export const takeOverKey = async (
  db: TableRef,
  claim: Claim,
  dead: InProgress,
  next: { response: StoredResponse } | { traceId: string; leaseMs: number },
): Promise<boolean> => {
  const nowMs = Date.now();
  const condition = {
    Key: idempotencyKey(claim.merchantId, claim.key),
    ConditionExpression: '#status = :inProgress AND fingerprint = :fingerprint AND in_flight_until = :deadUntil',
    ExpressionAttributeNames: { '#status': 'status' },
  };
  const values = {
    ':inProgress': IN_PROGRESS,
    ':fingerprint': claim.fingerprint,
    ':deadUntil': dead.inFlightUntil,
    ':claimId': claim.claimId,
  };
  if ('response' in next) {
    const completion = completionOf(next.response, nowMs);
    return updateApplied(db, {
      ...condition,
      UpdateExpression: `${completion.expression}, claim_id = :claimId REMOVE in_flight_until`,
      ExpressionAttributeNames: { ...condition.ExpressionAttributeNames, ...completion.names },
      ExpressionAttributeValues: { ...values, ...completion.values },
    });
  }
  return updateApplied(db, {
    ...condition,
    UpdateExpression: 'SET claim_id = :claimId, trace_id = :traceId, in_flight_until = :until',
    ExpressionAttributeValues: { ...values, ':traceId': next.traceId, ':until': nowMs + next.leaseMs },
  });
};

/** The SET of a completed record: its response, replayed for 24 hours from `nowMs`. */
const completionOf = (response: StoredResponse, nowMs: number) => {
  const sealed = (response.sealedFields?.length ?? 0) > 0;
  return {
    expression: `SET #status = :completed, response_status = :statusCode, response_headers = :headers, response_body = :body, ${
      sealed ? 'response_sealed = :sealed, ' : ''
    }completed_at = :now, #expires = :expires`,
    names: { '#status': 'status', '#expires': TTL_ATTRIBUTE },
    values: {
      ':completed': COMPLETED,
      ':statusCode': response.statusCode,
      ':headers': response.headers,
      ':body': response.body,
      ':now': new Date(nowMs).toISOString(),
      ':expires': Math.floor(nowMs / 1000) + RECORD_TTL_SECONDS,
      ...(sealed ? { ':sealed': response.sealedFields } : {}),
    },
  };
};

const ownClaim = (claim: Claim) => ({
  Key: idempotencyKey(claim.merchantId, claim.key),
  ConditionExpression: 'claim_id = :claimId AND #status = :inProgress',
  ExpressionAttributeNames: { '#status': 'status' },
});

/** Stores the final response of the claimed request, replayed for 24 hours from now; false when the claim was lost. */
export const completeKey = async (db: TableRef, claim: Claim, response: StoredResponse): Promise<boolean> => {
  const completion = completionOf(response, Date.now());
  return updateApplied(db, {
    ...ownClaim(claim),
    UpdateExpression: `${completion.expression} REMOVE in_flight_until`,
    ExpressionAttributeNames: completion.names,
    ExpressionAttributeValues: { ':claimId': claim.claimId, ':inProgress': IN_PROGRESS, ...completion.values },
  });
};

/** Gives the key up without a response, still bound to the request; `forget` (it never ran): it expires now (roles have no DeleteItem). */
export const releaseKey = (db: TableRef, claim: Claim, forget = false) =>
  updateApplied(db, {
    ...ownClaim(claim),
    UpdateExpression: `SET in_flight_until = :released${forget ? ', #expires = :now' : ''}`,
    ...(forget ? { ExpressionAttributeNames: { ...ownClaim(claim).ExpressionAttributeNames, '#expires': TTL_ATTRIBUTE } } : {}),
    ExpressionAttributeValues: {
      ':claimId': claim.claimId,
      ':inProgress': IN_PROGRESS,
      ':released': 0,
      ...(forget ? { ':now': Math.floor(Date.now() / 1000) } : {}),
    },
  });
