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
import type { ApiRoute } from './route';

/** The merchant's quota after authentication (docs/design-notes.md#quotas); QUOTA_ENFORCEMENT=off skips it (unit tests). */
const enforced = process.env.QUOTA_ENFORCEMENT !== 'off';
let limiter: ReturnType<typeof createQuotaLimiter> | undefined;
const quotaLimiter = () => {
  limiter ??= createQuotaLimiter({ db: functionTable, fallback: defaultQuota(currentStage()) });
  return limiter;
};

/** What the admission brought besides itself: a create's order sequence number, when the quota's take wrote it. */
type Admission = { orderNumber?: OrderNumber };

export type QuotaContext = AuthenticatedContext & {
  quota?: QuotaDecision;
  /** Resolves once the quota admitted the request and its Idempotency-Key is claimed (or throws their answer). */
  admitted: () => Promise<Admission>;
  /** The quota's decision alone, with the order sequence number its write took: a route that `admitsBesideReads` may number with it before `admitted`. */
  decided: () => Promise<Admission>;
};

/** Whether `decision` has failed by the next turn of the event loop: decided from this container's own view, with no call. */
const refusedAtOnce = (decision: Promise<unknown>) =>
  Promise.race([
    decision.then(
      () => false,
      () => true,
    ),
    new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
  ]);

/** Admits the request or refuses it with 429 and Retry-After; a route that `admitsBesideReads` awaits the decision in its handler. */
export const quota = (
  route: Pick<ApiRoute, 'admitsBesideReads' | 'placesOrders'>,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, QuotaContext> => ({
  before: async (request) => {
    const { context } = request;
    if (!enforced) {
      context.admitted = context.decided = async () => ({});
      return;
    }
    const merchantId = context.credential.merchant.id;
    const deciding = quotaLimiter()
      .admit(merchantId, { sequence: route.placesOrders })
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
    context.admitted = context.decided = () => deciding;
    // A refusal this container knows from its own view (no call) ends the request here, before any read or claim.
    if (!route.admitsBesideReads || (await refusedAtOnce(deciding))) {
      await deciding;
      return;
    }
    // Awaited later (by the handler or at the answer): not an unhandled rejection meanwhile.
    deciding.catch(() => undefined);
  },
  onError: async (request) => {
    try {
      await request.context.admitted?.();
    } catch (refusal) {
      request.error = refusal as Error;
    }
  },
});

/** Puts the RateLimit headers on every answer at `requestEnd`, which an early answer (a replay) does not skip. */
export const putQuotaHeaders = (request: Request<APIGatewayProxyEvent, APIGatewayProxyResult | null, Error, Context>) => {
  const decision = (request.context as Partial<QuotaContext>).quota;
  if (decision && request.response) request.response.headers = { ...request.response.headers, ...decision.headers };
};
