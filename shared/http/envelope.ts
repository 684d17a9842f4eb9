import { MESSAGES, type FieldErrors } from '../errors';

/** Which response envelope a route speaks; the route manifest says which. */
export type EnvelopeKind = 'v2' | 'legacy';

export type LaravelPagination = {
  current_page: number;
  last_page: number;
  per_page: number;
  total: number;
  next_page_url: string | null;
  prev_page_url: string | null;
};

export type InvitePagination = {
  total: number;
  count: number;
  per_page: number;
  current_page: number;
  total_pages: number;
};

export type Meta = { pagination?: LaravelPagination | InvitePagination };

export const v2Body = (
  traceId: string,
  outcome: { data: unknown; meta?: Meta } | { errors: FieldErrors },
) =>
  'errors' in outcome
    ? { success: false, data: null, errors: outcome.errors, meta: { trace_id: traceId } }
    : { success: true, data: outcome.data, errors: null, meta: { ...outcome.meta, trace_id: traceId } };

export const legacySuccessBody = (message: string, data: unknown) => ({ success: true, message, data });

/** The legacy endpoint's failure shapes, one per status the spec lists. */
export const legacyFailureBody = (statusCode: number, errors: FieldErrors) => {
  const first = Object.values(errors)[0]?.[0] ?? MESSAGES.serverError;
  if (statusCode === 401) return { message: MESSAGES.unauthenticated };
  if (statusCode === 422) return { success: false, message: MESSAGES.invalidData, data: { errors } };
  return { success: false, message: first, data: [] };
};
