import { buildApiHandler, type Handle } from './api-handler';
import { idempotencyKey, idempotentResponse } from './idempotency';
import type { PostRoute } from './route';
import type { Schemas } from './validate';

/**
 * A POST route's Lambda handler, built from its manifest entry: apiHandler's chain plus the
 * optional `Idempotency-Key` header (every POST route takes it: shared/http/route.ts).
 */
export const postApiHandler = <S extends Schemas>(route: PostRoute, schemas: S, handle: Handle<S>) =>
  buildApiHandler(route, schemas, handle, { claimKey: idempotencyKey(), recordResponse: idempotentResponse() });
