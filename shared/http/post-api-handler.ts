import { buildApiHandler, type Handle } from './api-handler';
import { idempotencyKey, idempotentResponse, type ReplySecrets } from './idempotency';
import type { PostRoute, ReplyDataOf } from './route';
import type { Schemas } from './validate';

/**
 * A POST route's Lambda handler, built from its manifest entry: apiHandler's chain plus the
 * optional `Idempotency-Key` header (every POST route takes it: shared/http/route.ts). A route
 * that answers a secret names it (`secrets`), so its idempotency record keeps it sealed.
 */
export const postApiHandler = <S extends Schemas, R extends PostRoute>(
  route: R,
  schemas: S,
  handle: Handle<S, ReplyDataOf<R>>,
  secrets?: ReplySecrets,
) =>
  buildApiHandler(route, schemas, handle, {
    claimKey: idempotencyKey(secrets, route.admitsBesideReads === true),
    recordResponse: idempotentResponse(secrets),
  });
