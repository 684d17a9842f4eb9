import * as z from 'zod/mini';

/** A lone surrogate ("\ud800") fails later and far from the request (SES refuses it), so every text field is checked at the door. */
const WELL_FORMED_MESSAGE = 'The :attribute field must be a valid UTF-8 string.';

const wellFormed = () => z.refine<string>((value) => value.isWellFormed(), { message: WELL_FORMED_MESSAGE });

/** Fails a zod transform with a Laravel-style message (validation fills in `:attribute`), on `path` when given. */
export const refuse = (ctx: { issues: z.core.$ZodRawIssue[] }, input: unknown, message: string, path?: PropertyKey[]) => {
  ctx.issues.push({ code: 'custom', message, input, ...(path ? { path } : {}) });
  return z.NEVER;
};

/** Items separated by commas (blanks and empty items ignored, duplicates collapsed), case-sensitive; undefined when one is not allowed. */
export const commaList = <T extends string>(value: string, allowed: readonly T[]): T[] | undefined => {
  const parts = value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  return parts.every((part): part is T => (allowed as readonly string[]).includes(part)) ? [...new Set(parts)] : undefined;
};

/** The base of every text field the API accepts: a string that is well-formed Unicode. */
export const text = () => z.string().check(wellFormed());

/** Trimmed first, as Laravel's TrimStrings: only spaces is missing (docs/design-notes.md#order-rules-and-messages). */
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

/** An integer in [min, max], the bounds checked first so a number past them (1e20) is told the API's limit. */
export const boundedInt = (min: number, max: number) => z.number().check(z.minimum(min), z.maximum(max), z.int());

/** An address as RFC 5322 writes it unquoted (docs/design-notes.md#order-rules-and-messages); zod's own refused `a&b@example.com`. */
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
