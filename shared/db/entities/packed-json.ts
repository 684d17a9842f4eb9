import { deflateRawSync, inflateRawSync } from 'node:zlib';
import * as z from 'zod/mini';

/**
 * JSON text kept deflated (raw DEFLATE, a binary attribute), for the items that carry an event:
 * DynamoDB charges a write unit per started KB of an item (and of each index entry that projects
 * it), and an order's event of a few rows, about 1.3 KB of text, halves. Items written before hold
 * the text itself: both read back as the same text.
 */
export const packedJson = z.union([z.string(), z.instanceof(Uint8Array)]);

export const packJson = (json: string): Uint8Array => deflateRawSync(json);

export const unpackJson = (stored: string | Uint8Array): string =>
  typeof stored === 'string' ? stored : inflateRawSync(stored).toString('utf8');
