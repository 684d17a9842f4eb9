import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { eventsQuery } from '#shared/schemas/events';
import { orderCreateBody, orderUpdateBody } from '#shared/schemas/order';
import { inviteCreateBody } from '#shared/schemas/program';
import { webhookCreateBody, webhookDeliveriesQuery, webhookUpdateBody } from '#shared/schemas/webhooks';
import { attributeName, laravelErrors, MAX_NAMED_PROHIBITED } from '#shared/validation/messages';
import { orderBody } from './support/fixtures';

/** The Laravel-style errors for `input` against `schema`, through real zod issues. */
const errorsFor = (schema: z.ZodMiniType, input: unknown) => {
  const result = z.safeParse(schema, input);
  if (result.success) throw new Error('expected the input to be invalid');
  return laravelErrors(result.error.issues, input);
};

describe('attributeName', () => {
  it.each([
    ['order_no', 'order no'],
    ['total_shipping_value', 'total shipping value'],
    ['order_rows.0.product_name', 'order rows.0.product name'],
    ['customer.email', 'customer.email'],
    ['page', 'page'],
  ])('shows %s as "%s"', (key, shown) => {
    expect(attributeName(key)).toBe(shown);
  });
});

describe('laravelErrors', () => {
  it('trims every string before its rule, the currency code and the e-mail addresses too (TrimStrings)', () => {
    // Act
    const parsed = z.parse(orderCreateBody, orderBody({ currency_code: ' EUR ', customer: { name: 'Dan', email: ' dan@example.com ' } }));

    // Assess
    expect(parsed).toMatchObject({ currency_code: 'EUR', customer: { email: 'dan@example.com' } });
  });

  it('refuses a field a webhook update cannot change (its secret) by name, rather than ignoring it', () => {
    expect(errorsFor(webhookUpdateBody, { secret: 'whsec_mine', enabled: false })).toEqual({ secret: ['The secret field is prohibited.'] });
  });

  it('refuses a page number on the lists paged by cursor, naming the cursor, rather than answer the first page again', () => {
    expect(errorsFor(webhookDeliveriesQuery, { page: '2' })).toEqual({
      page: ['The page field is not taken here: this list is paged by cursor (cursor).'],
    });
    expect(errorsFor(eventsQuery, { page: '2' })).toEqual({
      page: ['The page field is not taken here: this list is paged by cursor (after).'],
    });
  });

  it('refuses a field a webhook create cannot set (its own secret or uuid) by name, as an update does, rather than ignoring it', () => {
    expect(errorsFor(webhookCreateBody, { url: 'https://shop.example/hooks', secret: 'whsec_mine', uuid: 'mine' })).toEqual({
      secret: ['The secret field is prohibited.'],
      uuid: ['The uuid field is prohibited.'],
    });
  });

  it("refuses a webhook URL over 2,048 characters with the string rule's message, as the document's maxLength says", () => {
    // Act
    const errors = errorsFor(webhookCreateBody, { url: `https://shop.example/${'a'.repeat(2048)}` });

    // Assess
    expect(errors).toEqual({ url: ['The url field must not be greater than 2048 characters.'] });
  });

  it('names at most MAX_NAMED_PROHIBITED unknown fields and none with a name over 255 characters, and counts the rest, so the answer stays small', () => {
    // Prepare
    const unknown = Object.fromEntries(Array.from({ length: 200_000 }, (_, at) => [`k${at}`, 1]));
    const longName = 'x'.repeat(1_000_000);

    // Act
    const many = errorsFor(orderUpdateBody, { total_shipping_value: 1, ...unknown });
    const long = errorsFor(orderUpdateBody, { total_shipping_value: 1, [longName]: 1 });

    // Assess
    expect(Object.keys(many)).toHaveLength(MAX_NAMED_PROHIBITED + 1);
    expect(many.k0).toEqual(['The k0 field is prohibited.']);
    expect(many.message).toEqual([`The request has ${(200_000 - MAX_NAMED_PROHIBITED).toLocaleString('en-US')} more prohibited fields.`]);
    expect(JSON.stringify(many).length).toBeLessThan(10_000);
    expect(long).toEqual({ message: ['The request has 1 more prohibited field.'] });
  });

  it('says a missing, null or empty required field "is required"', () => {
    // Act
    const errors = errorsFor(orderCreateBody, { ...orderBody(), affiliate_slug: undefined, order_no: null, currency_code: '' });

    // Assess
    expect(errors).toEqual({
      affiliate_slug: ['The affiliate slug field is required.'],
      order_no: ['The order no field is required.'],
      currency_code: ['The currency code field is required.'],
    });
  });

  it('names the expected type of a present value of the wrong type', () => {
    // Act
    const errors = errorsFor(orderCreateBody, { ...orderBody(), order_no: 1001, order_rows: 'tent', customer: 'dan' });

    // Assess
    expect(errors).toEqual({
      order_no: ['The order no field must be a string.'],
      order_rows: ['The order rows field must be an array.'],
      customer: ['The customer field must be an object.'],
    });
  });

  it('says a fractional number "must be an integer"', () => {
    expect(errorsFor(orderUpdateBody, { total_shipping_value: 9.99 })).toEqual({
      total_shipping_value: ['The total shipping value field must be an integer.'],
    });
  });

  it('says a boolean field "must be true or false"', () => {
    expect(errorsFor(z.object({ is_active: z.boolean() }), { is_active: 'yes' })).toEqual({
      is_active: ['The is active field must be true or false.'],
    });
  });

  it('gives numeric minimums (min), exclusive minimums (gt) and maximums', () => {
    // Act
    const errors = errorsFor(orderCreateBody, {
      ...orderBody(),
      total_shipping_value: -5,
      order_rows: [{ product_name: 'Tent', price_value: -1, tax_value: -2, quantity: 0 }],
    });
    const tooBig = errorsFor(z.object({ rate: z.number().check(z.maximum(100)) }), { rate: 101 });

    // Assess
    expect(errors).toEqual({
      total_shipping_value: ['The total shipping value field must be at least 0.'],
      'order_rows.0.price_value': ['The order rows.0.price value field must be at least 0.'],
      'order_rows.0.tax_value': ['The order rows.0.tax value field must be at least 0.'],
      'order_rows.0.quantity': ['The order rows.0.quantity field must be greater than 0.'],
    });
    expect(tooBig).toEqual({ rate: ['The rate field must not be greater than 100.'] });
  });

  it('gives string length limits, exact lengths included', () => {
    // Act
    const errors = errorsFor(orderCreateBody, {
      ...orderBody(),
      order_no: 'x'.repeat(256),
      currency_code: 'EURO',
      order_rows: [{ product_name: 'Tent', product_sku: 's'.repeat(256), price_value: 1, quantity: 1 }],
    });
    const tooShort = errorsFor(orderCreateBody, { ...orderBody(), currency_code: 'EU' });
    const atLeast = errorsFor(z.object({ code: z.string().check(z.minLength(4)) }), { code: 'abc' });

    // Assess
    expect(errors).toEqual({
      order_no: ['The order no field must not be greater than 255 characters.'],
      currency_code: ['The currency code field must be 3 characters.'],
      'order_rows.0.product_sku': ['The order rows.0.product sku field must not be greater than 255 characters.'],
    });
    expect(tooShort).toEqual({ currency_code: ['The currency code field must be 3 characters.'] });
    expect(atLeast).toEqual({ code: ['The code field must be at least 4 characters.'] });
  });

  it('says an invalid e-mail "must be a valid email address", keyed by its nested path', () => {
    expect(errorsFor(orderCreateBody, { ...orderBody(), customer: { email: 'dan at example' } })).toEqual({
      'customer.email': ['The customer.email field must be a valid email address.'],
    });
  });

  it.each(['a&b@example.com', 'a/b=c@example.com', "o'brien@example.ie", 'user@example.xn--p1ai'])(
    'takes %s, an address a checkout form (HTML input type=email) sends',
    (email) => {
      const parsed = z.safeParse(orderCreateBody, { ...orderBody(), customer: { email } });
      expect(parsed.success && parsed.data.customer?.email).toBe(email);
    },
  );

  it.each([
    'a@b',
    'müller@example.de',
    'a@-b.com',
    'a@b..com',
    '.a@example.com',
    'a..b@example.com',
    'a.@example.com',
    'a@1.2',
    'x@example.c',
  ])('refuses %s as not a valid email address', (email) => {
    expect(errorsFor(orderCreateBody, { ...orderBody(), customer: { email } })).toEqual({
      'customer.email': ['The customer.email field must be a valid email address.'],
    });
  });

  it('refuses more than 64 characters before the @ where the service sends mail (an invitation), and keeps them for an order customer it never mails', () => {
    const long = `${'a'.repeat(65)}@example.com`;
    const invite = { email: long, sender_email: 'owner@example.com' };
    expect(errorsFor(inviteCreateBody, invite)).toEqual({ email: ['The email field must be a valid email address.'] });
    expect(z.safeParse(inviteCreateBody, { ...invite, email: `${'a'.repeat(64)}@example.com` }).success).toBe(true);
    const parsed = z.safeParse(orderCreateBody, { ...orderBody(), customer: { email: long } });
    expect(parsed.success && parsed.data.customer?.email).toBe(long);
  });

  it('says another failed format "format is invalid"', () => {
    expect(errorsFor(z.object({ slug: z.string().check(z.regex(/^[a-z]+$/)) }), { slug: 'A!' })).toEqual({
      slug: ['The slug field format is invalid.'],
    });
  });

  it('says a value outside an enum is "The selected ... is invalid.", and a missing one is required', () => {
    // Prepare
    const schema = z.object({ status: z.enum(['pending', 'accepted', 'declined']) });

    // Act / Assess
    expect(errorsFor(schema, { status: 'approved' })).toEqual({ status: ['The selected status is invalid.'] });
    expect(errorsFor(schema, { status: '' })).toEqual({ status: ['The status field is required.'] });
  });

  it('gives array size limits', () => {
    // Act
    const tooFew = errorsFor(orderCreateBody, { ...orderBody(), order_rows: [] });
    const tooMany = errorsFor(orderCreateBody, {
      ...orderBody(),
      order_rows: Array.from({ length: 201 }, () => ({ product_name: 'Peg', price_value: 1, quantity: 1 })),
    });

    // Assess
    expect(tooFew).toEqual({ order_rows: ['The order rows field must have at least 1 items.'] });
    expect(tooMany).toEqual({ order_rows: ['The order rows field must not have more than 200 items.'] });
  });

  it('says each unrecognized key of a strict object "is prohibited", nested paths included', () => {
    // Act
    const top = errorsFor(orderUpdateBody, { total_shipping_value: 1, order_no: 'A-2', currency_code: 'USD' });
    const nested = errorsFor(z.object({ customer: z.strictObject({ email: z.string() }) }), {
      customer: { email: 'a@b.co', vip_level: 3 },
    });

    // Assess
    expect(top).toEqual({ order_no: ['The order no field is prohibited.'], currency_code: ['The currency code field is prohibited.'] });
    expect(nested).toEqual({ 'customer.vip_level': ['The customer.vip level field is prohibited.'] });
  });

  it.each([[[]], ['order'], [42], [null]])('says a root value %j that is not an object concerns the body as a whole', (input) => {
    expect(errorsFor(orderCreateBody, input)).toEqual({ message: ['The request body must be a JSON object.'] });
  });

  it('keeps only the first message of each field', () => {
    // Act
    const errors = errorsFor(z.object({ code: z.string().check(z.minLength(5), z.regex(/^x/)) }), { code: 'ab' });

    // Assess
    expect(errors).toEqual({ code: ['The code field must be at least 5 characters.'] });
  });

  it('fills :attribute into a custom message', () => {
    // Prepare
    const schema = z.object({
      order_no: z.string().check(z.refine((value) => !value.includes(' '), 'The :attribute must not contain spaces.')),
    });

    // Act / Assess
    expect(errorsFor(schema, { order_no: 'A 1' })).toEqual({ order_no: ['The order no must not contain spaces.'] });
  });

  it('falls back to "is invalid" for other issue kinds', () => {
    expect(errorsFor(z.object({ ref: z.union([z.string(), z.number()]) }), { ref: true })).toEqual({ ref: ['The ref field is invalid.'] });
  });

  it('returns no errors for no issues', () => {
    expect(laravelErrors([], {})).toEqual({});
  });

  it('trims strings first, as Laravel does: whitespace-only is missing and padding is dropped', () => {
    // Act
    const errors = errorsFor(
      orderCreateBody,
      orderBody({ order_no: '   ', order_rows: [{ product_name: ' ', price_value: 1, quantity: 1 }] }),
    );
    const parsed = z.safeParse(orderCreateBody, orderBody({ order_no: '  A-1 ', affiliate_slug: ' alice ' }));

    // Assess
    expect(errors.order_no).toEqual(['The order no field is required.']);
    expect(errors['order_rows.0.product_name']).toEqual(['The order rows.0.product name field is required.']);
    expect(parsed.success && parsed.data.order_no).toBe('A-1');
    expect(parsed.success && parsed.data.affiliate_slug).toBe('alice');
  });

  it('says a string sent for an integer field "must be an integer"', () => {
    expect(errorsFor(orderUpdateBody, { total_shipping_value: 'abc' })).toEqual({
      total_shipping_value: ['The total shipping value field must be an integer.'],
    });
  });
});
