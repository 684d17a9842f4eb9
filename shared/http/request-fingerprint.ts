import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { parseJsonBody } from './json-body';

/** A piece of the canonical form: text written as it is, or a JSON value still to spell. */
type Piece = { text: string } | { json: unknown };

/** A value's pieces: its punctuation and keys as text, its members still to spell. */
const piecesOf = (value: unknown): Piece[] => {
  if (Array.isArray(value))
    return [{ text: '[' }, ...value.flatMap((item, at) => [...(at > 0 ? [{ text: ',' }] : []), { json: item }]), { text: ']' }];
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const members = Object.keys(record)
      .sort()
      .flatMap((key, at) => [{ text: `${at > 0 ? ',' : ''}${JSON.stringify(key)}:` }, { json: record[key] }]);
    return [{ text: '{' }, ...members, { text: '}' }];
  }
  return [{ text: JSON.stringify(value) ?? 'null' }];
};

/** One spelling of a JSON value, keys sorted, no whitespace: written as text with its own stack, so no body overflows the call stack. */
const canonicalJson = (value: unknown): string => {
  const out: string[] = [];
  const pending: Piece[] = [{ json: value }];
  for (let piece = pending.pop(); piece !== undefined; piece = pending.pop()) {
    if ('text' in piece) {
      out.push(piece.text);
      continue;
    }
    const pieces = piecesOf(piece.json);
    for (let at = pieces.length - 1; at >= 0; at--) pending.push(pieces[at] as Piece);
  }
  return out.join('');
};

/** "The same request" for an Idempotency-Key: SHA-256 of the method, the path and the canonical body (no body is not `{}`). */
export const requestFingerprint = (
  event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'path' | 'body' | 'isBase64Encoded'>,
  jsonBody: unknown = parseJsonBody(event),
): string =>
  createHash('sha256')
    .update(`${event.httpMethod} ${event.path}\n`)
    .update(jsonBody === undefined ? '' : canonicalJson(jsonBody))
    .digest('hex');
