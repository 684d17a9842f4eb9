import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { parseJsonBody } from './json-body';

/**
 * One spelling of a JSON value: object keys sorted (by code unit), no whitespace, arrays in their
 * order, numbers and strings as JSON.stringify writes them. Written as text, never rebuilt as an
 * object, so a client's `__proto__` key stays a plain key.
 */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
};

/**
 * What "the same request" means for an Idempotency-Key: SHA-256 (hex) of the method, the path
 * (without the stage) and the body compared as JSON (its canonical form: key order and whitespace
 * do not matter; no body is not `{}`). Headers and the query string are not part of it. The chain
 * passes the body it already parsed; by default it is parsed here.
 */
export const requestFingerprint = (
  event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'path' | 'body' | 'isBase64Encoded'>,
  jsonBody: unknown = parseJsonBody(event),
): string =>
  createHash('sha256')
    .update(`${event.httpMethod} ${event.path}\n`)
    .update(jsonBody === undefined ? '' : canonicalJson(jsonBody))
    .digest('hex');
