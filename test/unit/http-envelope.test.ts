import { describe, expect, it } from 'vitest';
import { route } from '#functions/routes';
import { ApiError, forbidden, invalid, invalidField, MESSAGES, notFound, ruleRefused, unauthenticated } from '#shared/errors';
import { apiHandler } from '#shared/http/api-handler';
import { envelopeResponse, legacyFailureBody, legacySuccessBody, v2Body } from '#shared/http/envelope';

const TRACE = '2026-03-01T10:00:00Z:api:0badc0de';

describe('v2Body', () => {
  it('on success carries data, null errors and the trace id beside any other meta', () => {
    // Act
    const body = v2Body(TRACE, {
      data: { orders: [] },
      meta: { pagination: { total: 0, count: 0, per_page: 15, current_page: 1, total_pages: 1 } },
    });

    // Assess
    expect(body).toEqual({
      success: true,
      data: { orders: [] },
      errors: null,
      meta: { pagination: { total: 0, count: 0, per_page: 15, current_page: 1, total_pages: 1 }, trace_id: TRACE },
    });
  });

  it('on success without meta still carries the trace id', () => {
    expect(v2Body(TRACE, { data: { order: { uuid: 'u' } } }).meta).toEqual({ trace_id: TRACE });
  });

  it('on failure carries null data and the field-keyed errors', () => {
    expect(v2Body(TRACE, { errors: { order_no: ['The order no field is required.'] } })).toEqual({
      success: false,
      data: null,
      errors: { order_no: ['The order no field is required.'] },
      meta: { trace_id: TRACE },
    });
  });
});

describe('envelopeResponse', () => {
  it("answers with the route's success status from its manifest entry, 200 when it names none", () => {
    // Act
    const created = envelopeResponse(route('orders-create'), TRACE, { data: { order: { uuid: 'u', order_no: 'A-1' } } });
    const queued = envelopeResponse(route('webhooks-test'), TRACE, { data: { delivery: { event_id: 'e', event_type: 'webhook.test' } } });
    const read = envelopeResponse(route('orders-get'), TRACE, { data: { order: null } });

    // Assess
    expect([created.statusCode, queued.statusCode, read.statusCode]).toEqual([201, 202, 200]);
  });

  it("types a handler's reply by its route's response: data of another shape does not compile", () => {
    // Act
    // @ts-expect-error `orders` is not the `order` that orders-get answers (functions/responses.ts).
    const wrong = () => apiHandler(route('orders-get'), {}, async () => ({ data: { orders: [] } }));

    // Assess
    expect(wrong).toBeTypeOf('function');
  });
});

describe('legacy envelope', () => {
  it('success is {success, message, data}', () => {
    expect(legacySuccessBody('Order created successfully.', { uuid: 'u', order_no: 'A-1' })).toEqual({
      success: true,
      message: 'Order created successfully.',
      data: { uuid: 'u', order_no: 'A-1' },
    });
  });

  it('401 is {message: "Unauthenticated."} only', () => {
    expect(legacyFailureBody(401, { message: ['anything'] })).toEqual({ message: 'Unauthenticated.' });
  });

  it('422 puts the field errors under data.errors', () => {
    expect(legacyFailureBody(422, { order_no: ['The order no has already been taken.'] })).toEqual({
      success: false,
      message: 'The given data was invalid.',
      data: { errors: { order_no: ['The order no has already been taken.'] } },
    });
  });

  it('403 and other statuses carry the first message and data []', () => {
    expect(legacyFailureBody(403, { message: [MESSAGES.noLiveOrders] })).toEqual({
      success: false,
      message: MESSAGES.noLiveOrders,
      data: [],
    });
    expect(legacyFailureBody(500, {})).toEqual({ success: false, message: 'Server Error', data: [] });
  });
});

describe('ApiError helpers', () => {
  it.each([
    ['unauthenticated', unauthenticated(), 401, { message: ['Unauthenticated.'] }],
    ['forbidden', forbidden('No.'), 403, { message: ['No.'] }],
    ['notFound', notFound(), 404, { message: ['Not Found'] }],
    ['ruleRefused', ruleRefused('The order is already cancelled.'), 422, { message: ['The order is already cancelled.'] }],
    ['invalid', invalid({ a: ['x'], b: ['y'] }), 422, { a: ['x'], b: ['y'] }],
    ['invalidField', invalidField('currency_code', 'bad'), 422, { currency_code: ['bad'] }],
  ])('%s carries its status and messages', (_, error, statusCode, errors) => {
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ statusCode, errors, name: 'ApiError' });
  });

  it('uses the first message as the Error message, for the logs', () => {
    expect(invalid({ order_no: ['first', 'second'] }).message).toBe('first');
    expect(new ApiError(418, {}).message).toBe('HTTP 418');
  });
});
