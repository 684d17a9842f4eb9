import { buildApiHandler, type Handle } from './api-handler';
import { idempotencyKey, idempotentResponse, type ReplySecrets } from './idempotency';
import type { PostRoute, ReplyDataOf } from './route';
import type { Schemas } from './validate';

/** A POST route's handler: apiHandler's chain plus `Idempotency-Key`; `secrets` are kept sealed in its record. */
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
