import type { RouteId } from '../../functions/routes';
import { idempotencyKey, idempotentResponse } from '../middleware/idempotency';
import type { Schemas } from '../middleware/validate';
import { buildApiHandler, type Handle } from './api-handler';

/**
 * A POST route's Lambda handler: apiHandler's chain plus the optional `Idempotency-Key` header
 * (every POST route takes it: functions/routes.ts `acceptsIdempotencyKey`).
 */
export const postApiHandler = <S extends Schemas>(routeId: RouteId, schemas: S, handle: Handle<S>) =>
  buildApiHandler(routeId, schemas, handle, { claimKey: idempotencyKey(), recordResponse: idempotentResponse() });
