import { randomUUID } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { functionTable } from '#shared/db/client';
import { type Claim, claimKey, completeKey, releaseKey, type StoredResponse, takeOverKey } from '#shared/db/entities/idempotency';
import { withWriteRetry } from '#shared/db/retry';
import { ApiError, busy, IDEMPOTENCY_MESSAGES, keyReused, MAX_IDEMPOTENCY_KEY_LENGTH, REPLAYED_HEADER } from '#shared/errors';
import { logger } from '#shared/logger';
import type { AuthenticatedContext } from './auth';
import { AnsweredEarly } from './envelope';
import type { QuotaContext } from './quota';
import { requestFingerprint } from './request-fingerprint';
import { type ApiMiddleware, headerOf, type RequestKey } from './types';
import type { Schemas, ValidatedContext } from './validate';

// `Idempotency-Key` on POST routes: what is stored, replayed and refused, docs/design-notes.md#idempotency-key.

/** Takeovers of a dead claim tried before answering 503 (another retry of the same request took it meanwhile). */
const TAKEOVER_ATTEMPTS = 3;

/** Retry-After of a key still in flight: most such requests finish within a second. */
const RETRY_AFTER_SECONDS = 1;

/** A claim lasts what is left of the invocation plus a margin: past it, a retry may take over a crashed request's key. */
const LEASE_MARGIN_MS = 5_000;
const DEFAULT_REMAINING_MS = 30_000;
const leaseMs = (context: Context) => (context.getRemainingTimeInMillis?.() || DEFAULT_REMAINING_MS) + LEASE_MARGIN_MS;

const checkKey = (key: string) => {
  const length = [...key].length;
  const problem = length === 0 ? 'required' : length > MAX_IDEMPOTENCY_KEY_LENGTH ? 'tooLong' : undefined;
  if (problem) throw new ApiError(400, { idempotency_key: [IDEMPOTENCY_MESSAGES[problem]] });
};

/** The secrets a route answers (a webhook's signing secret) and the box that seals them for the record; only those routes bundle it. */
export type ReplySecrets = {
  /** Paths of keys from the body's root, e.g. `['data', 'webhook', 'secret']`. */
  fields: readonly (readonly string[])[];
  box: {
    seal: (secret: string, merchantId: string, subject: string) => Promise<string>;
    open: (sealed: string, merchantId: string, subject: string) => Promise<string>;
  };
};

const recordSubject = (key: string) => `IDEMPOTENCY#${key}`;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Replaces the string at each path of `body` (JSON) by what `change` makes of it; the paths it changed. */
const rewriteStrings = async (body: string, paths: readonly (readonly string[])[], change: (value: string) => Promise<string>) => {
  const root: unknown = JSON.parse(body);
  const changed: string[][] = [];
  for (const path of paths) {
    const parent = path
      .slice(0, -1)
      .reduce<unknown>((node, key) => (isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined), root);
    const name = path.at(-1);
    if (name === undefined || !isObject(parent) || !Object.hasOwn(parent, name)) continue;
    const value = parent[name];
    if (typeof value !== 'string') continue;
    parent[name] = await change(value);
    changed.push([...path]);
  }
  // The body was written by JSON.stringify, so writing it again gives it back byte for byte.
  return { body: changed.length > 0 ? JSON.stringify(root) : body, changed };
};

/** The response as the record keeps it: the route's secrets sealed, the rest as sent. */
const toStored = async (
  response: APIGatewayProxyResult,
  claim: Pick<Claim, 'merchantId' | 'key'>,
  secrets: ReplySecrets | undefined,
): Promise<StoredResponse> => {
  const headers = Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, value]) => [name, String(value)]));
  if (!secrets) return { statusCode: response.statusCode, headers, body: response.body };
  const { body, changed } = await rewriteStrings(response.body, secrets.fields, (secret) =>
    secrets.box.seal(secret, claim.merchantId, recordSubject(claim.key)),
  );
  return { statusCode: response.statusCode, headers, body, ...(changed.length > 0 ? { sealedFields: changed } : {}) };
};

const asReplay = (response: APIGatewayProxyResult): APIGatewayProxyResult => ({
  ...response,
  headers: { ...response.headers, [REPLAYED_HEADER]: 'true' },
});

/** The stored response as first sent: its sealed values opened. */
const replay = async (stored: StoredResponse, merchantId: string, key: string, secrets: ReplySecrets | undefined) => {
  let body = stored.body;
  if (stored.sealedFields?.length) {
    // Only the route that stored sealed values can replay them: the path is part of the fingerprint.
    if (!secrets) throw new Error('A stored response has sealed values but the route has no box to open them');
    ({ body } = await rewriteStrings(body, stored.sealedFields, (sealed) => secrets.box.open(sealed, merchantId, recordSubject(key))));
  }
  return asReplay({ statusCode: stored.statusCode, headers: stored.headers, body });
};

/** The path with each path parameter spelled as validated, so a retry spelled otherwise (a uuid in capitals) is the same request. */
const pathAsValidated = (event: Pick<APIGatewayProxyEvent, 'path' | 'pathParameters'>, params: unknown): string => {
  const validated = (params ?? {}) as Record<string, unknown>;
  const respelled = new Map(
    Object.entries(event.pathParameters ?? {}).flatMap(([name, raw]) => {
      const value = validated[name];
      return raw !== undefined && typeof value === 'string' && value !== raw ? [[raw, value] as const] : [];
    }),
  );
  return event.path
    .split('/')
    .map((segment) => respelled.get(segment) ?? segment)
    .join('/');
};

type KeyContext = Context & AuthenticatedContext & ValidatedContext<Schemas> & { requestKey?: RequestKey };

/** A route's first answer rebuilt from what its request wrote, with the request's trace id; such a route's success is not stored. */
export type AnswerFromStore = (context: KeyContext, traceId: string) => Promise<APIGatewayProxyResult | undefined>;

/** Claims the key (the request then runs), or says what a key held by another request answers: 422, 409 or its first answer. */
const claimOrAnswer = async (
  event: APIGatewayProxyEvent,
  context: KeyContext & { traceId: string },
  { key, fingerprint }: RequestKey,
  { secrets, fromStore }: IdempotencyOptions,
): Promise<APIGatewayProxyResult | undefined> => {
  // One claim id for every try of this request's claim, so a try refused by an earlier one that was applied knows it.
  const claimId = randomUUID();
  const merchantId = context.credential.merchant.id;
  const { traceId } = context;
  const lease = leaseMs(context);
  for (let attempt = 1; attempt <= TAKEOVER_ATTEMPTS; attempt++) {
    const outcome = await withWriteRetry(() => claimKey(functionTable, { merchantId, key, fingerprint, leaseMs: lease, claimId, traceId }));
    if (outcome.claimed) {
      context.idempotency = outcome.claim;
      return undefined;
    }
    const { record } = outcome;
    // A record stored before the path was fingerprinted as validated has it as sent.
    if (record.fingerprint !== fingerprint && record.fingerprint !== requestFingerprint(event, context.jsonBody)) throw keyReused();
    if (record.status === 'completed') return replay(record.response, merchantId, key, secrets);
    const answered = record.traceId !== undefined && fromStore ? await fromStore(context, record.traceId) : undefined;
    if (!outcome.dead) {
      if (answered) return asReplay(answered);
      throw new ApiError(409, { message: [IDEMPOTENCY_MESSAGES.inFlight] }, { 'retry-after': String(RETRY_AFTER_SECONDS) });
    }
    const claim = { merchantId, key, claimId, fingerprint };
    const stored = answered && (await toStored(answered, claim, secrets));
    const next = stored ? { response: stored } : { traceId, leaseMs: lease };
    if (await withWriteRetry(() => takeOverKey(functionTable, claim, record, next))) {
      if (stored) return replay(stored, merchantId, key, secrets);
      context.idempotency = claim;
      return undefined;
    }
  }
  throw busy();
};

/** A POST route's Idempotency-Key handling: the secrets its answers show (kept sealed), whether the claim goes out beside the handler, and how it answers from its store. */
type IdempotencyOptions = { secrets?: ReplySecrets; besideHandler?: boolean; fromStore?: AnswerFromStore };

/** Claims the key after validation, or answers with a finished request's stored response; `besideHandler`: `admitted()` waits for the claim too. */
export const idempotencyKey = (
  options: IdempotencyOptions = {},
): MiddlewareObj<
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Error,
  AuthenticatedContext & ValidatedContext<Schemas> & QuotaContext & { traceId: string }
> => ({
  before: async (request) => {
    const { event, context } = request;
    const key = headerOf(event, 'idempotency-key');
    if (key === undefined) return undefined;
    checkKey(key);
    const requestKey = {
      key,
      fingerprint: requestFingerprint({ ...event, path: pathAsValidated(event, context.input.params) }, context.jsonBody),
    };
    context.requestKey = requestKey;
    // Early return: middy skips the handler and every `after`, and answers this.
    if (!options.besideHandler) return claimOrAnswer(event, context, requestKey, options);
    const admission = context.admitted();
    const claiming = claimOrAnswer(event, context, requestKey, options);
    const settled = Promise.allSettled([admission, claiming]).then(([admitted, claimed]) => {
      if (admitted.status === 'rejected') throw admitted.reason;
      if (claimed.status === 'rejected') throw claimed.reason;
      if (claimed.value) throw new AnsweredEarly(claimed.value);
      return admitted.value;
    });
    // Awaited by the handler or at the answer: not an unhandled rejection meanwhile.
    settled.catch(() => undefined);
    context.admitted = () => settled;
    return undefined;
  },
});

/** Records the final response of a claimed key (its secrets sealed), but a success its route answers from its store; must sit outside the envelope. */
export const idempotentResponse = ({ secrets, fromStore }: IdempotencyOptions = {}, successStatus = 200): ApiMiddleware => {
  const settle = async (request: Parameters<NonNullable<ApiMiddleware['after']>>[0]) => {
    const claim = request.context.idempotency;
    const response = request.response;
    if (!claim) return;
    request.context.idempotency = undefined;
    try {
      if (!response || response.statusCode >= 500 || response.statusCode === 429) {
        await withWriteRetry(() => releaseKey(functionTable, claim, response?.statusCode === 429));
        return;
      }
      if (fromStore && response.statusCode === successStatus) return;
      const stored = await toStored(response, claim, secrets);
      // Retried like every write: a throttled or conflicted record would make the next retry run the request again.
      if (!(await withWriteRetry(() => completeKey(functionTable, claim, stored))))
        logger.warn('Idempotency claim lost before the response was stored', { key: claim.key });
    } catch (error) {
      // The client still gets its answer; the key stays in flight until its lease ends.
      logger.error('Could not record the idempotent response', error instanceof Error ? error : String(error));
    }
  };
  // Returns nothing, so on an error the response stays the envelope's and later onError middlewares run.
  return { after: settle, onError: settle };
};
