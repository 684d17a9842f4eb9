/**
 * The coarse per-token limit, a backstop against floods (each merchant's quota, shared/quota/, is the
 * limit merchants meet): AWS WAF's rate rule deployed, local/rate-limit.ts in `npm start`. Its key is
 * the header normalized as authentication reads it (`bearer T`, `BEARER T` and `Bearer  T` share one
 * budget): KEY_TRANSFORMATIONS in WAF, rateLimitKey locally (lib/README.md#rate-limits).
 */
export const RATE_LIMIT = { requestsPer5Minutes: 150_000 } as const;

/** The WAF text transformations of the key, lowest priority first. */
export const KEY_TRANSFORMATIONS = ['LOWERCASE', 'COMPRESS_WHITE_SPACE'] as const;

export const rateLimitKey = (authorization: string): string => authorization.toLowerCase().replace(/\s+/g, ' ').trim();
