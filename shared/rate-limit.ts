/**
 * The coarse per-token limit, a backstop against floods (each merchant's own quota, shared/quota/,
 * is the limit merchants meet): AWS WAF's rate rule deployed, local/rate-limit.ts in `npm start`.
 * 150,000 per 5 minutes is 500/s, ten times the default quota.
 * Authentication takes the scheme in any case and any run of spaces before the token, so the key
 * is the header normalized the same way (lowercase, each run of whitespace one space): `bearer T`,
 * `BEARER T` and `Bearer  T` share one budget. The WAF rule applies KEY_TRANSFORMATIONS, in order;
 * rateLimitKey is the same normalization for the local limiter.
 */
export const RATE_LIMIT = { requestsPer5Minutes: 150_000 } as const;

/** The WAF text transformations of the key, lowest priority first. */
export const KEY_TRANSFORMATIONS = ['LOWERCASE', 'COMPRESS_WHITE_SPACE'] as const;

export const rateLimitKey = (authorization: string): string => authorization.toLowerCase().replace(/\s+/g, ' ').trim();
