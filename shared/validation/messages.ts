import type { $ZodIssue as Issue } from 'zod/v4/core';
import type { FieldErrors } from '#shared/errors';

/** Laravel's displayable attribute: the key with underscores as spaces (`__proto__` shows as `proto`). */
export const attributeName = (key: string): string =>
  key
    .replace(/_+/g, ' ')
    .replace(/ ?\. ?/g, '.')
    .trim();

/** Field names are the client's: read as own properties only, so no lookup reaches `__proto__` or `constructor`. */
const valueAt = (input: unknown, path: PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (value, segment) =>
      value !== null && typeof value === 'object' && Object.hasOwn(value, segment)
        ? (value as Record<PropertyKey, unknown>)[segment]
        : undefined,
    input,
  );

/** Laravel's `required`: absent, null, or a string that is empty once trimmed. */
const isMissing = (value: unknown) => value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  int: 'an integer',
  // Every number this API accepts is an integer.
  number: 'an integer',
  array: 'an array',
  object: 'an object',
  boolean: 'true or false',
};

const typeName = (expected: string) => (Object.hasOwn(TYPE_NAMES, expected) ? TYPE_NAMES[expected] : `of type ${expected}`);

const messageFor = (issue: Issue, attr: string, value: unknown): string => {
  const field = (rest: string) => `The ${attr} field ${rest}.`;
  const required = isMissing(value) ? field('is required') : undefined;
  switch (issue.code) {
    case 'invalid_type':
      return required ?? field(`must be ${typeName(issue.expected)}`);
    case 'too_small':
      if (issue.origin === 'string') return required ?? field(`must be ${issue.exact ? '' : 'at least '}${issue.minimum} characters`);
      if (issue.origin === 'array') return field(`must have at least ${issue.minimum} items`);
      return field(`must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}`);
    case 'too_big':
      if (issue.origin === 'string') return field(`must ${issue.exact ? 'be' : 'not be greater than'} ${issue.maximum} characters`);
      if (issue.origin === 'array') return field(`must not have more than ${issue.maximum} items`);
      return field(`must not be greater than ${issue.maximum}`);
    case 'invalid_format':
      return field(issue.format === 'email' ? 'must be a valid email address' : 'format is invalid');
    case 'invalid_value':
      return required ?? `The selected ${attr} is invalid.`;
    case 'custom':
      return issue.message.replace(':attribute', attr);
    default:
      return field('is invalid');
  }
};

/** Prohibited fields an answer names, and the longest name it repeats, so a body of unknown keys is not answered twice its size. */
export const MAX_NAMED_PROHIBITED = 50;
const MAX_ECHOED_NAME_LENGTH = 255;

/** zod issues as Laravel's messages (`order_rows.0.product_name` keys), the first per field, as own keys: merge with mergeFieldErrors. */
export const laravelErrors = (issues: readonly Issue[], input: unknown): FieldErrors => {
  const errors = new Map<string, string[]>();
  const add = (key: string, message: string) => {
    if (!errors.has(key)) errors.set(key, [message]);
  };
  let unnamed = 0;
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys ?? []) {
        const path = [...issue.path.map(String), key].join('.');
        if (path.length > MAX_ECHOED_NAME_LENGTH || errors.size >= MAX_NAMED_PROHIBITED) unnamed++;
        else add(path, `The ${attributeName(path)} field is prohibited.`);
      }
      continue;
    }
    if (issue.path.length === 0) {
      add('message', 'The request body must be a JSON object.');
      continue;
    }
    const key = issue.path.map(String).join('.');
    add(key, messageFor(issue, attributeName(key), valueAt(input, issue.path)));
  }
  if (unnamed > 0) add('message', `The request has ${unnamed.toLocaleString('en-US')} more prohibited field${unnamed === 1 ? '' : 's'}.`);
  return Object.fromEntries(errors);
};

/** Field errors of several sources as one, first message per field kept, own keys only. */
export const mergeFieldErrors = (...sources: FieldErrors[]): FieldErrors => {
  const merged = new Map<string, string[]>();
  for (const source of sources) for (const [key, messages] of Object.entries(source)) if (!merged.has(key)) merged.set(key, messages);
  return Object.fromEntries(merged);
};
