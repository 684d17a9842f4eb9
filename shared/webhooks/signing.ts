import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signing (standard-webhooks/standard-webhooks, spec/standard-webhooks.md): a
 * secret is `whsec_` + base64 of random bytes; a delivery carries `webhook-id`, `webhook-timestamp`
 * (Unix seconds) and `webhook-signature`, `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, one per
 * secret in effect, space-separated (during a rotation, the new one and the old one).
 */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export const generateSecret = (): string => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

/** The three headers of one delivery, signed by every secret given (newest first). */
export const signDelivery = (secrets: readonly string[], id: string, at: Date, body: string): Record<string, string> => ({
  'webhook-id': id,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
});
