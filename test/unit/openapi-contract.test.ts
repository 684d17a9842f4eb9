import { describe, expect, it } from 'vitest';
import { assertDocumented, ContractViolation } from '#test/integration/contract';

/** The integration suite's response check (test/integration/contract.ts) refuses what the document does not say. */

const TRACE = '2026-11-23T02:00:00Z:api:0123abcd';
const json = (extra: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json', ...extra });
const tier = {
  name: 'Gold',
  slug: 'gold',
  description: 'Top',
  created_at: '2026-11-22T10:00:00.000Z',
  updated_at: '2026-11-22T10:00:00.000Z',
};
const ok = (data: unknown) => ({ success: true, data, errors: null, meta: { trace_id: TRACE } });
const failure = (message: string) => ({ success: false, data: null, errors: { message: [message] }, meta: { trace_id: TRACE } });

describe('the response check against openapi.json', () => {
  it('accepts a documented status with a body as documented', () => {
    // Prepare
    const response = { status: 200, headers: json(), body: ok({ tier }) };

    // Act
    const check = () => assertDocumented('GET', '/api/v2/tiers/gold', response);

    // Assess
    expect(check).not.toThrow();
  });

  it('refuses a field the document does not list', () => {
    // Prepare
    const response = { status: 200, headers: json(), body: ok({ tier: { ...tier, secret: 'x' } }) };

    // Act
    const check = () => assertDocumented('GET', '/api/v2/tiers/gold', response);

    // Assess
    expect(check).toThrow(ContractViolation);
    expect(check).toThrow(/additional properties/);
  });

  it('refuses a status the operation does not document', () => {
    // Prepare
    const response = { status: 418, headers: json(), body: failure('teapot') };

    // Act
    const check = () => assertDocumented('GET', '/api/v2/tiers/gold', response);

    // Assess
    expect(check).toThrow(/no 418/);
  });

  it('refuses a 503 without its Retry-After header', () => {
    // Prepare
    const response = { status: 503, headers: json(), body: failure('The service is busy. Please retry the request.') };

    // Act
    const check = () => assertDocumented('POST', '/api/v2/orders/create', response);

    // Assess
    expect(check).toThrow(/Retry-After is required/);
  });

  it('checks the legacy route against the legacy envelope', () => {
    // Prepare
    const response = { status: 401, headers: json(), body: failure('Unauthenticated.') };

    // Act
    const check = () => assertDocumented('POST', '/api/orders/create', response);

    // Assess
    expect(check).toThrow(ContractViolation);
  });

  it('has nothing to check for a path the document does not have', () => {
    // Prepare
    const response = { status: 404, headers: json(), body: failure('Not Found') };

    // Act
    const check = () => assertDocumented('GET', '/api/v2/nowhere', response);

    // Assess
    expect(check).not.toThrow();
  });
});
