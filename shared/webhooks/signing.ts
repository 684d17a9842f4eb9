import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Standard Webhooks signing: a secret is `whsec_` + base64 of random bytes. */
export const generateSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** The three headers of one delivery, signed by every secret in effect (during a rotation, the new one and the old one). */
export const signDelivery = (secrets: readonly string[], id: string, at: Date, body: string): Record<string, string> => ({
  'webhook-id': id,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
});
