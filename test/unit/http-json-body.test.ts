import { describe, expect, it } from 'vitest';
import { ApiError } from '#shared/errors';
import { parseJsonBody } from '#shared/http/json-body';
import { apiEvent } from './support/api';

const run = async (options: Parameters<typeof apiEvent>[1]) => parseJsonBody(apiEvent('orders-create', options));

describe('the JSON body step', () => {
  it('parses a JSON body into the context', async () => {
    // Act
    const parsed = await run({ rawBody: '{"order_no":"A-1","order_rows":[{"quantity":2}]}' });

    // Assess
    expect(parsed).toEqual({ order_no: 'A-1', order_rows: [{ quantity: 2 }] });
  });

  it.each([
    ['no body', {}],
    ['an empty body', { rawBody: '' }],
    ['a blank body', { rawBody: '  \n ' }],
  ])('leaves the body undefined for %s', async (_, options) => {
    // Act
    const parsed = await run(options);

    // Assess
    expect(parsed).toBeUndefined();
  });

  it('decodes a base64-encoded body first', async () => {
    // Act
    const parsed = await run({ rawBody: Buffer.from('{"name":"Zoë"}').toString('base64'), isBase64Encoded: true });

    // Assess
    expect(parsed).toEqual({ name: 'Zoë' });
  });

  it.each(['{"a":', "{'a':1}", 'a=1&b=2', '{"a":1}}'])('refuses %j with a 422 keyed "message"', async (rawBody) => {
    // Act
    const outcome = run({ rawBody });

    // Assess
    await expect(outcome).rejects.toBeInstanceOf(ApiError);
    await expect(outcome).rejects.toMatchObject({ statusCode: 422, errors: { message: ['The request body must be valid JSON.'] } });
  });
});
