/**
 * The coarse per-token limit against floods (merchants meet their quota first), keyed by the header as
 * authentication reads it: KEY_TRANSFORMATIONS in WAF, rateLimitKey locally (lib/README.md#rate-limits).
 */
export const RATE_LIMIT = { requestsPer5Minutes: 150_000 } as const;

/** The WAF text transformations of the key, lowest priority first. */
export const KEY_TRANSFORMATIONS = ['LOWERCASE', 'COMPRESS_WHITE_SPACE'] as const;

export const rateLimitKey = (authorization: string): string => authorization.toLowerCase().replace(/\s+/g, ' ').trim();
