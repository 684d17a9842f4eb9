import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { currentStage } from '#shared/config';
import { functionTable } from '#shared/db/client';
import type { OrderNumber } from '#shared/db/entities/quota';
import { ApiError, MESSAGES } from '#shared/errors';
import { logger } from '#shared/logger';
import { emitMetrics, METRIC } from '#shared/metrics';
import { createQuotaLimiter, type QuotaDecision } from '#shared/quota/limiter';
import { defaultQuota } from '#shared/quota/policy';
import type { AuthenticatedContext } from './auth';

/**
 * The merchant's quota in the request chain: `quota()` admits the request right after authentication,
 * keyed on the merchant (whatever token or spelling of it), or refuses with 429 and an honest
 * Retry-After; `putQuotaHeaders`, at the request's end, puts `RateLimit-Policy` and `RateLimit` on
 * every answer to an authenticated request, replays included (docs/design-notes.md#quotas).
 * QUOTA_ENFORCEMENT=off skips both: the unit tests of the handlers, which count their own writes.
 */
const enforced = process.env.QUOTA_ENFORCEMENT !== 'off';
let limiter: ReturnType<typeof createQuotaLimiter> | undefined;
const quotaLimiter = () => {
  limiter ??= createQuotaLimiter({ db: functionTable, fallback: defaultQuota(currentStage()) });
  return limiter;
};

/** What the admission brought besides itself: a create's order sequence number, when the quota's take wrote it. */
export type Admission = { orderNumber?: OrderNumber };

export type QuotaContext = AuthenticatedContext & {
  quota?: QuotaDecision;
  /** Resolves once the request is admitted; rejects with the 429 when it is refused. */
  admitted?: () => Promise<Admission>;
  /** The quota's decision alone (`admitted` may also wait for an Idempotency-Key's claim). */
  decided?: () => Promise<Admission>;
};

/** The admission of a request no quota decides (QUOTA_ENFORCEMENT=off): at once, with nothing taken. */
export const admittedAtOnce = async (): Promise<Admission> => ({});

/** Whether `decision` has failed by the next turn of the event loop: decided from this container's own view, with no call. */
const refusedAtOnce = (decision: Promise<unknown>) =>
  Promise.race([
    decision.then(
      () => false,
      () => true,
    ),
    new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
  ]);

/**
 * `besideReads`: whether the decision is left to the route's handler, which awaits it
 * beside its first reads (the route's `admitsBesideReads`); any answer still waits for it, the
 * handler's own (api-handler.ts) and an error's (onError): so a refused request answers 429
 * whatever else it met, as when the decision comes first. `placesOrders`: a take this request
 * writes also takes its order sequence number (`Admission`).
 */
export const quota = (
  besideReads = false,
  placesOrders = false,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, QuotaContext> => ({
  before: async (request) => {
    if (!enforced) return;
    const { context } = request;
    const merchantId = context.credential.merchant.id;
    const deciding = quotaLimiter()
      .admit(merchantId, { sequence: placesOrders })
      .then((decision): Admission => {
        context.quota = decision;
        if (decision.degraded)
          logger.warn("Quota store unavailable: admitted against this container's own bucket", { merchant_id: merchantId });
        if (decision.admitted) return decision.orderNumber !== undefined ? { orderNumber: decision.orderNumber } : {};
        // Per merchant (dashboard, logs insights) and for the stage (the alarm: no alarm per merchant).
        emitMetrics({ [METRIC.quotaRefusals]: 1 }, { merchant: merchantId });
        emitMetrics({ [METRIC.quotaRefusals]: 1 });
        throw new ApiError(
          429,
          { message: [MESSAGES.tooManyAttempts] },
          { 'retry-after': String(decision.retryAfterSeconds ?? 1), ...decision.headers },
        );
      });
    context.admitted = () => deciding;
    context.decided = () => deciding;
    // A refusal this container knows from its own view (no call) ends the request here, before any read or claim.
    if (!besideReads || (await refusedAtOnce(deciding))) {
      await deciding;
      return;
    }
    // Awaited later (by the handler or at the answer): not an unhandled rejection meanwhile.
    deciding.catch(() => undefined);
  },
  onError: async (request) => {
    const { admitted } = request.context;
    try {
      await admitted?.();
    } catch (refusal) {
      request.error = refusal as Error;
    }
  },
});

/**
 * Puts the merchant's RateLimit headers on the answer, whatever gave it: middy's `requestEnd` hook
 * (shared/http/api-handler.ts), not a middleware's `after`, because a middleware that answers
 * early (an Idempotency-Key replay) skips every later step, `after` and `onError` alike. It runs
 * after the response is recorded, so a stored answer never carries the figures of its time.
 */
export const putQuotaHeaders = (request: Request<APIGatewayProxyEvent, APIGatewayProxyResult | null, Error, Context>) => {
  const decision = (request.context as Partial<QuotaContext>).quota;
  if (decision && request.response) request.response.headers = { ...request.response.headers, ...decision.headers };
};
