import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ApiError } from '#shared/errors';
import { type Schemas, validateInput } from '#shared/http/validate';
import { uuidParams } from '#shared/schemas/common';
import { orderCreateBody, orderListQuery, orderUpdateBody } from '#shared/schemas/order';
import { apiEvent, type EventOptions } from './support/api';
import { ORDER_UUID, orderBody } from './support/fixtures';

const run = async (schemas: Schemas, options: EventOptions & { jsonBody?: unknown } = {}) => {
  const { jsonBody, ...eventOptions } = options;
  return validateInput(schemas, apiEvent('orders-update', eventOptions), jsonBody);
};

describe('the validation step', () => {
  it('puts the parsed params, query and body in the context, with defaults and transforms applied', async () => {
    // Act
    const input = await run(
      { params: uuidParams, query: orderListQuery, body: orderCreateBody },
      {
        pathParameters: { uuid: ORDER_UUID },
        query: { page: '2' },
        jsonBody: orderBody({ order_rows: [{ product_name: 'Tent', product_sku: '', price_value: 1, quantity: 1, ignored: 'x' }] }),
      },
    );

    // Assess
    expect(input.params).toEqual({ uuid: ORDER_UUID });
    expect(input.query).toEqual({ per_page: 15, page: 2 });
    expect(input.body).toMatchObject({
      order_no: 'A-1001',
      order_rows: [{ product_name: 'Tent', product_sku: null, price_value: 1, quantity: 1 }],
    });
    expect((input.body as { order_rows: object[] }).order_rows[0]).not.toHaveProperty('ignored');
  });

  it('answers 404 for path parameters of the wrong shape, before looking at the body', async () => {
    // Act
    const outcome = run({ params: uuidParams, body: orderUpdateBody }, { pathParameters: { uuid: 'ORD-1' }, jsonBody: { bad: true } });

    // Assess
    await expect(outcome).rejects.toBeInstanceOf(ApiError);
    await expect(outcome).rejects.toMatchObject({ statusCode: 404, errors: { message: ['Not Found'] } });
  });

  it('answers 404 when the path parameter is missing altogether', async () => {
    // Act
    const outcome = run({ params: uuidParams });

    // Assess
    await expect(outcome).rejects.toMatchObject({ statusCode: 404 });
  });

  it('reports query and body problems together in one 422', async () => {
    // Act
    const outcome = run(
      { query: orderListQuery, body: orderUpdateBody },
      { query: { per_page: '0' }, jsonBody: { total_shipping_value: 'ten' } },
    );

    // Assess
    await expect(outcome).rejects.toMatchObject({
      statusCode: 422,
      errors: {
        per_page: ['The per page field must be at least 1.'],
        total_shipping_value: ['The total shipping value field must be an integer.'],
      },
    });
  });

  it('validates a missing body as an empty object, so required fields are named', async () => {
    // Act
    const outcome = run({ body: orderUpdateBody });

    // Assess
    await expect(outcome).rejects.toMatchObject({
      statusCode: 422,
      errors: { total_shipping_value: ['The total shipping value field is required.'] },
    });
  });

  it('refuses a JSON null body like any body that is not an object, where no body at all is validated as {}', async () => {
    // Act
    const outcome = run({ body: orderUpdateBody }, { jsonBody: null });

    // Assess
    await expect(outcome).rejects.toMatchObject({ statusCode: 422, errors: { message: ['The request body must be a JSON object.'] } });
  });

  it('takes a path UUID in capitals as the resource it names, in the lowercase the API writes', async () => {
    // Act
    const input = await run({ params: uuidParams }, { pathParameters: { uuid: ORDER_UUID.toUpperCase() } });

    // Assess
    expect(input.params).toEqual({ uuid: ORDER_UUID });
  });

  it('leaves parts without a schema undefined', async () => {
    // Act
    const input = await run({ query: z.object({}) }, { jsonBody: { anything: 1 } });

    // Assess
    expect(input).toEqual({ body: undefined, query: {}, params: undefined });
  });
});
