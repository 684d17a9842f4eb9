import { createHash } from 'node:crypto';
import { queryPartition } from '#shared/db/query';
import { type TableRef, TTL_ATTRIBUTE } from '#shared/db/table-def';
import { merchantPk, putItem } from './base';

/** The body of a queue message too large to travel inline, in chunks keyed by its content (storing it again rewrites them). */
const PAYLOAD_RETENTION_DAYS = 16;
const CHUNK_BYTES = 300_000;

export type PayloadRef = { merchant_id: string; sha256: string; bytes: number };

const payloadPk = (ref: Pick<PayloadRef, 'merchant_id' | 'sha256'>) => `${merchantPk(ref.merchant_id)}#PAYLOAD#${ref.sha256}`;

/** Stores `body` for `merchantId` and returns the reference a message carries instead. */
export const storePayload = async (db: TableRef, merchantId: string, body: string, now = Date.now()): Promise<PayloadRef> => {
  const bytes = Buffer.from(body, 'utf8');
  const ref: PayloadRef = { merchant_id: merchantId, sha256: createHash('sha256').update(bytes).digest('base64url'), bytes: bytes.length };
  const expires = Math.floor(now / 1000) + PAYLOAD_RETENTION_DAYS * 24 * 3600;
  const chunks = [];
  for (let start = 0; start < bytes.length; start += CHUNK_BYTES) chunks.push(bytes.subarray(start, start + CHUNK_BYTES));
  await Promise.all(
    chunks.map((data, index) =>
      putItem(db, {
        Item: { pk: payloadPk(ref), sk: String(index).padStart(4, '0'), type: 'message_payload', data, [TTL_ATTRIBUTE]: expires },
      }),
    ),
  );
  return ref;
};

/** The body a reference stands for; throws when it is gone (expired) or incomplete. */
export const loadPayload = async (db: TableRef, ref: PayloadRef): Promise<string> => {
  const items = await queryPartition(db, payloadPk(ref), { ConsistentRead: true });
  const chunks = items.map((item) => item.data as Uint8Array);
  const body = Buffer.concat(chunks);
  if (body.length !== ref.bytes) throw new Error(`Message payload ${ref.sha256} is missing (${body.length} of ${ref.bytes} bytes)`);
  return body.toString('utf8');
};
