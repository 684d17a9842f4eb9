import { createHash, randomUUID } from 'node:crypto';

/** A name-based uuid: who made a write is derived from the Idempotency-Key, so a retry recognises its own applied write. */
export const derivedUuid = (merchantId: string, purpose: string, key: string): string => {
  const hash = createHash('sha256').update(`${merchantId}\u0000${purpose}\u0000${key}`).digest();
  // Version 5's nibble and the RFC 9562 variant.
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

export type RequestIdentity = {
  /** The uuid of the resource this request creates (an order, an invite, a webhook endpoint). */
  newUuid: (purpose: 'order' | 'invite' | 'webhook') => string;
  /** The id this request stamps on every item it changes (`last_write_id`). */
  writeId: string;
};

export const requestIdentity = (merchantId: string, claim: { key: string; fingerprint: string } | undefined): RequestIdentity => {
  if (claim === undefined) return { newUuid: () => randomUUID(), writeId: randomUUID() };
  const name = `${claim.key}\u0000${claim.fingerprint}`;
  return { newUuid: (purpose) => derivedUuid(merchantId, purpose, name), writeId: derivedUuid(merchantId, 'write', name) };
};
