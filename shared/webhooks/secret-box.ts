import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Webhook secrets at rest: AES-256-GCM under the SHA-256 of WEBHOOK_KEY_SECRET_ARN's secret (or WEBHOOK_SECRET_KEY), bound to an item. */
const VERSION = 'v1';

let keyPromise: Promise<Buffer> | undefined;

const loadKeyText = async (): Promise<string> => {
  const local = process.env.WEBHOOK_SECRET_KEY;
  if (local) return local;
  const arn = process.env.WEBHOOK_KEY_SECRET_ARN;
  if (!arn) throw new Error('Neither WEBHOOK_SECRET_KEY nor WEBHOOK_KEY_SECRET_ARN is set: webhook secrets cannot be sealed');
  // Loaded only by the functions that seal or open secrets, and only on their first use.
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const { SecretString } = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: arn }));
  if (!SecretString) throw new Error('The webhook key secret has no value');
  return SecretString;
};

const keyOf = (text: string) => createHash('sha256').update(text).digest();

const webhookKey = (): Promise<Buffer> => {
  keyPromise ??= loadKeyText().then(keyOf, (error: unknown) => {
    keyPromise = undefined;
    throw error;
  });
  return keyPromise;
};

const boundTo = (merchantId: string, subject: string) => Buffer.from(`${merchantId}:${subject}`);

/** Seals a secret under the stage's key (or under `keyText`: the local stack seeding its demo endpoint). */
export const sealSecret = async (secret: string, merchantId: string, subject: string, keyText?: string): Promise<string> => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyText === undefined ? await webhookKey() : keyOf(keyText), iv).setAAD(
    boundTo(merchantId, subject),
  );
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), sealed.toString('base64')].join('.');
};

export const openSecret = async (box: string, merchantId: string, subject: string): Promise<string> => {
  const [version, iv, tag, sealed] = box.split('.');
  if (version !== VERSION || !iv || !tag || !sealed) throw new Error('Not a sealed webhook secret');
  const decipher = createDecipheriv('aes-256-gcm', await webhookKey(), Buffer.from(iv, 'base64'))
    .setAAD(boundTo(merchantId, subject))
    .setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64')), decipher.final()]).toString('utf8');
};

/** The box for a webhook secret in an answer an Idempotency-Key keeps (shared/http/idempotency.ts). */
export const secretBox = { seal: sealSecret, open: openSecret };
