import { deflateRawSync, inflateRawSync } from 'node:zlib';
import * as z from 'zod/mini';

/** JSON text kept deflated (an order's event halves its write units); items written before hold the text itself. */
export const packedJson = z.union([z.string(), z.instanceof(Uint8Array)]);

export const packJson = (json: string): Uint8Array => deflateRawSync(json);

export const unpackJson = (stored: string | Uint8Array) => (typeof stored === 'string' ? stored : inflateRawSync(stored).toString('utf8'));
