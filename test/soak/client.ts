import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The soak's HTTP client: a merchant platform that behaves well. On an answer that says "try
 * again" (503, 502, 409 in flight, 429) or on no answer at all (its own timeout, a dropped
 * connection) it sends the very same request again (same bytes, same Idempotency-Key when it had
 * one), honouring Retry-After (capped small), a bounded number of times. Every attempt is recorded
 * (status, raw body for writes), so the checks can see what each logical operation was told.
 */

/** An attempt's outcome: the HTTP status, or no answer (`timeout`: the client gave up; `error`: the connection failed). */
export type Outcome = number | 'timeout' | 'error';

export type Attempt = {
  status: Outcome;
  /** The raw body as received (kept for writes and failures; list bodies are summarised by the caller). */
  body?: string;
  retryAfter?: string;
  replayed: boolean;
  ms: number;
  /** When the answer (or the give-up) came, epoch milliseconds: where the asynchronous lags start. */
  at: number;
};

export type Request = {
  url: string;
  token: string;
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  /** The body exactly as sent on every attempt (the Idempotency-Key fingerprint is byte-level). */
  body?: string;
  idempotencyKey?: string;
  /** A client that gives up early on its first attempt (its answer is lost to it, not to the server). */
  firstTimeoutMs?: number;
};

export type Response = { attempts: Attempt[]; last: Attempt; json: unknown };

/** Statuses after which the client tries again. 409: the key is still in flight; 429: the rate limit. */
export const RETRY_STATUSES: ReadonlySet<Outcome> = new Set<Outcome>([502, 503, 409, 429, 'timeout', 'error']);
export const isRetryable = (status: Outcome) => RETRY_STATUSES.has(status);
/** Outcomes after which the server may have applied the request without the client knowing it: no answer, or any 5xx. */
export const isAmbiguous = (status: Outcome) => typeof status !== 'number' || status >= 500;

/**
 * The retry budget of one logical operation. A key held by a request whose function stopped stays
 * in flight for the claim's lease (the invocation's remaining time + 5 s: up to 34 s locally, where
 * the context says 29 s), and a well-behaved client keeps retrying the 409 until it can take over.
 */
export const RETRY_POLICY = {
  maxAttempts: 60,
  budgetMs: 45_000,
  /** Retry-After is honoured up to this. */
  maxRetryAfterMs: 2_000,
  /** Back-off for answers without Retry-After (502, timeouts): base * 2^n, capped, with jitter. */
  backoffBaseMs: 100,
  backoffCapMs: 2_000,
  /** One attempt's timeout: the function timeout (10 s) plus queueing on a busy 2-core machine. */
  requestTimeoutMs: 30_000,
};

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/** Closes the client's idle sockets (at the end of a run). */
export const closeClient = () => agent.destroy();

const headerValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** One HTTP exchange; never throws. */
const attempt = (request: Request, timeoutMs: number) =>
  new Promise<Attempt>((resolve) => {
    const start = performance.now();
    const elapsed = () => performance.now() - start;
    let settled = false;
    const done = (value: Omit<Attempt, 'ms' | 'at'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...value, ms: elapsed(), at: Date.now() });
    };
    const headers: Record<string, string | number> = { Authorization: `Bearer ${request.token}`, Accept: 'application/json' };
    if (request.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = Buffer.byteLength(request.body);
    }
    if (request.idempotencyKey !== undefined) headers['Idempotency-Key'] = request.idempotencyKey;
    const req = http.request(`${request.url}${request.path}`, { method: request.method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        done({
          status: res.statusCode ?? 'error',
          body: Buffer.concat(chunks).toString('utf8'),
          retryAfter: headerValue(res.headers['retry-after']),
          replayed: headerValue(res.headers['idempotent-replayed']) === 'true',
        }),
      );
      res.on('error', () => done({ status: 'error', replayed: false }));
    });
    const timer = setTimeout(() => {
      done({ status: 'timeout', replayed: false });
      req.destroy();
    }, timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', () => done({ status: 'error', replayed: false }));
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });

/** How long to wait before the next attempt after `last` (the n-th attempt, from 1). */
const delayAfter = (last: Attempt, n: number) => {
  const retryAfter = Number(last.retryAfter);
  if (last.retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0) {
    return Math.min(retryAfter * 1000, RETRY_POLICY.maxRetryAfterMs) + Math.random() * 100;
  }
  const backoff = Math.min(RETRY_POLICY.backoffBaseMs * 2 ** (n - 1), RETRY_POLICY.backoffCapMs);
  return backoff / 2 + (Math.random() * backoff) / 2;
};

const parseJson = (text: string | undefined): unknown => {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * Sends the request, and again while the answer says so, within the retry budget. Returns every
 * attempt and the parsed body of the last one. `keepBody` decides whether successful bodies are
 * kept in the record (writes: yes, to compare replays byte for byte; large list pages: no).
 */
export const send = async (request: Request, keepBody = true): Promise<Response> => {
  const attempts: Attempt[] = [];
  const started = Date.now();
  for (;;) {
    const timeout = attempts.length === 0 && request.firstTimeoutMs !== undefined ? request.firstTimeoutMs : RETRY_POLICY.requestTimeoutMs;
    const result = await attempt(request, timeout);
    const json = parseJson(result.body);
    const keep = keepBody || (typeof result.status === 'number' && result.status >= 300);
    attempts.push(keep ? result : { ...result, body: undefined });
    const outOfBudget = attempts.length >= RETRY_POLICY.maxAttempts || Date.now() - started >= RETRY_POLICY.budgetMs;
    if (!isRetryable(result.status) || outOfBudget) return { attempts, last: result, json };
    await sleep(delayAfter(result, attempts.length));
  }
};
