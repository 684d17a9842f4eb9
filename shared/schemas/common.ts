import * as z from 'zod/mini';

declare global {
  interface String {
    /** ES2024 (Node 20+): false when the string holds a lone surrogate. */
    isWellFormed(): boolean;
  }
}

/**
 * JSON can carry strings no UTF-8 encoder accepts: a lone surrogate such as "\ud800". Stored, such
 * a string fails later and far from the request (SES refuses every e-mail quoting it), so every
 * text field of every body, query and path parameter is checked here, at the door: 422
 * `The content field must be a valid UTF-8 string.` (404 for a path parameter).
 */
export const WELL_FORMED_MESSAGE = 'The :attribute field must be a valid UTF-8 string.';

export const wellFormed = () => z.refine<string>((value) => value.isWellFormed(), { message: WELL_FORMED_MESSAGE });

/** The base of every text field the API accepts: a string that is well-formed Unicode. */
export const text = () => z.string().check(wellFormed());

/**
 * Laravel-style string rules: strings are trimmed first (Laravel's TrimStrings), so a required
 * string of only spaces is missing and ' A-1' and 'A-1' are one order_no; max 255 by default.
 */
export const requiredString = (max = 255) => text().check(z.trim(), z.minLength(1), z.maxLength(max));

/** Optional strings accept null and '' (Laravel turns empty strings into null). */
export const optionalString = (max = 255) =>
  z.optional(
    z.nullable(
      z.pipe(
        text().check(z.trim(), z.maxLength(max)),
        z.transform((value) => (value === '' ? null : value)),
      ),
    ),
  );

/**
 * An integer in [min, max]. The bounds are checked before integrality, so a number past the
 * bound (1e20, 2^53 + 1) is told the API's limit, not JavaScript's safe-integer limit.
 */
export const boundedInt = (min: number, max: number) => z.number().check(z.minimum(min), z.maximum(max), z.int());

/**
 * An address as RFC 5322 writes it unquoted: a dot-atom before the `@` (any of its characters, no
 * leading, trailing or doubled dot), LDH labels after it, the last a name of letters or an
 * internationalised one in its `xn--` form (what browsers send). zod's default pattern refused
 * `a&b@example.com` and `.xn--p1ai`.
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const ADDRESS = `${ATEXT}(?:\\.${ATEXT})*@(?:${LABEL}\\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$`;
/** One the service sends mail to also has at most 64 characters before the `@`, as SMTP takes them (SES refuses a longer one). */
const MAILBOX = new RegExp(`^(?=[^@]{1,64}@)${ADDRESS}`);
const ANY_ADDRESS = new RegExp(`^${ADDRESS}`);

/** An e-mail address, trimmed first like every string; `mailedTo: false` for one the service never sends to (an order's customer). */
export const emailAddress = ({ mailedTo = true } = {}) =>
  text().check(z.trim(), z.email({ pattern: mailedTo ? MAILBOX : ANY_ADDRESS }), z.maxLength(255));

/** A UUID in any case (RFC 9562 reads its hex digits either way), as the lowercase the API writes. */
export const uuidText = () =>
  z.pipe(
    text().check(z.uuid()),
    z.transform((value) => value.toLowerCase()),
  );

export const uuidParams = z.object({ uuid: uuidText() });

export const slugParams = z.object({ slug: text().check(z.minLength(1), z.maxLength(255)) });
