import type { EnvelopeKind } from './envelope';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What the request chain needs of a route: functions/routes.ts entries are these and more (shared/ never imports functions/). */
export type ApiRoute = {
  id: string;
  method: HttpMethod;
  envelope: EnvelopeKind;
  status?: 201 | 202;
  /** Creates orders: a live token needs permission to place live orders. */
  placesOrders?: boolean;
  /** Its handler reads beside the quota's decision and the key's claim, and awaits both (`admitted()`) before its first write. */
  admitsBesideReads?: boolean;
};

/** A route typed with the `data` its handler answers (functions/responses.ts); the property is never set. */
export type Replying<D> = { readonly replyData?: D };

/** The `data` a route's handler answers: unknown for a route not typed with one. */
export type ReplyDataOf<R> = R extends Replying<infer D> ? D : unknown;

/** Every POST route accepts an optional `Idempotency-Key` header (shared/http/idempotency.ts). */
export const acceptsIdempotencyKey = (route: Pick<ApiRoute, 'method'>): boolean => route.method === 'POST';

/** Only POST and PATCH read a request body; a GET or DELETE ignores any (HTTP gives it no meaning there). */
export const readsBody = (route: Pick<ApiRoute, 'method'>): boolean => route.method === 'POST' || route.method === 'PATCH';

/** Routes built with apiHandler (no Idempotency-Key) and with postApiHandler. */
export type ReadOrPatchRoute = ApiRoute & { method: 'GET' | 'PATCH' | 'DELETE' };
export type PostRoute = ApiRoute & { method: 'POST' };
