import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { affiliateRequestListQuery, inviteCreateBody, MAX_INVITE_CONTENT, parseStatusFilter } from '#shared/schemas/program';
import { laravelErrors } from '#shared/validation/messages';

/** What the validate middleware would answer: the parsed value, or the Laravel-style errors. */
const check = (schema: z.ZodMiniType, input: Record<string, unknown>) => {
  const result = z.safeParse(schema, input);
  return result.success ? { data: result.data } : { errors: laravelErrors(result.error.issues, input) };
};

describe('parseStatusFilter', () => {
  it('defaults to pending when absent or empty', () => {
    expect(parseStatusFilter(undefined)).toEqual(['pending']);
    expect(parseStatusFilter('')).toEqual(['pending']);
    expect(parseStatusFilter(' , ')).toEqual(['pending']);
  });

  it('accepts one status or several separated by commas, ignoring blanks and duplicates', () => {
    expect(parseStatusFilter('declined')).toEqual(['declined']);
    expect(parseStatusFilter('accepted, declined,accepted')).toEqual(['accepted', 'declined']);
    expect(parseStatusFilter('pending,')).toEqual(['pending']);
  });

  it('refuses any other value, and other casings (Laravel `in` is exact)', () => {
    expect(parseStatusFilter('active')).toBeUndefined();
    expect(parseStatusFilter('pending,bogus')).toBeUndefined();
    expect(parseStatusFilter('PENDING')).toBeUndefined();
  });
});

describe('affiliate-requests list query', () => {
  it('parses status with the page defaults', () => {
    expect(check(affiliateRequestListQuery, {})).toEqual({ data: { per_page: 15, page: 1, status: ['pending'] } });
    expect(check(affiliateRequestListQuery, { status: 'accepted,declined', page: '2' })).toEqual({
      data: { per_page: 15, page: 2, status: ['accepted', 'declined'] },
    });
  });

  it('answers an invalid status with the Laravel message keyed status', () => {
    expect(check(affiliateRequestListQuery, { status: 'pending,nope' })).toEqual({
      errors: { status: ['The selected status is invalid.'] },
    });
  });
});

describe('invite body', () => {
  it('requires email and sender_email, both e-mail addresses', () => {
    expect(check(inviteCreateBody, {})).toEqual({
      errors: { email: ['The email field is required.'], sender_email: ['The sender email field is required.'] },
    });
    expect(check(inviteCreateBody, { email: 'nope', sender_email: 'x@y.example' })).toEqual({
      errors: { email: ['The email field must be a valid email address.'] },
    });
  });

  it('takes optional content up to the cap', () => {
    expect(check(inviteCreateBody, { email: 'a@b.example', sender_email: 'x@y.example', content: '' })).toEqual({
      data: { email: 'a@b.example', sender_email: 'x@y.example', content: null },
    });
    expect(
      check(inviteCreateBody, { email: 'a@b.example', sender_email: 'x@y.example', content: 'x'.repeat(MAX_INVITE_CONTENT + 1) }),
    ).toEqual({
      errors: { content: [`The content field must not be greater than ${MAX_INVITE_CONTENT} characters.`] },
    });
  });
});
