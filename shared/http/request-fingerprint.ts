import { createHash } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';

/**
 * What "the same request" means for an Idempotency-Key: SHA-256 (hex) of the method, the path
 * (without the stage) and the raw body bytes (decoded when API Gateway sent them base64).
 * Headers and the query string are not part of it.
 */
export const requestFingerprint = (event: APIGatewayProxyEvent): string => {
  const body = event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);
  return createHash('sha256').update(`${event.httpMethod} ${event.path}\n`).update(body).digest('hex');
};
