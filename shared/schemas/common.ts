import * as z from 'zod/mini';

/**
 * Laravel-style string rules: strings are trimmed first (Laravel's TrimStrings), so a required
 * string of only spaces is missing and ' A-1' and 'A-1' are one order_no; max 255 by default.
 */
export const requiredString = (max = 255) => z.string().check(z.trim(), z.minLength(1), z.maxLength(max));

/** Optional strings accept null and '' (Laravel turns empty strings into null). */
export const optionalString = (max = 255) =>
  z.optional(z.nullable(z.pipe(z.string().check(z.trim(), z.maxLength(max)), z.transform((value) => (value === '' ? null : value)))));

export const nonNegativeInt = () => z.int().check(z.minimum(0));

export const emailAddress = () => z.email().check(z.maxLength(255));

export const uuidParams = z.object({ uuid: z.uuid() });
export const slugParams = z.object({ slug: z.string().check(z.minLength(1), z.maxLength(255)) });
