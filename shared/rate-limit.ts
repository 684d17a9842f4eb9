/** The coarse per-token limit against floods, keyed by the header as WAF and rateLimitKey read it (lib/README.md#rate-limits). */
export const RATE_LIMIT = { requestsPer5Minutes: 150_000 } as const;

/** The WAF text transformations of the key, lowest priority first. */
export const KEY_TRANSFORMATIONS = ['LOWERCASE', 'COMPRESS_WHITE_SPACE'] as const;

export const rateLimitKey = (authorization: string): string => authorization.toLowerCase().replace(/\s+/g, ' ').trim();
