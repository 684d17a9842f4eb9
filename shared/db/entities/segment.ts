import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import { isoNow } from '#shared/time';
import { storedItem } from './base';

/** A commission segment: `SEGMENT#<uuid>`. At most MAX_SEGMENTS per merchant, so the list is a bounded read. */
export const MAX_SEGMENTS = 200;

const segmentSchema = z.object({
  uuid: z.string(),
  name: z.string(),
  description: z.string(),
  segment_type: z.literal('percentage'),
  slugs: z.array(z.string()),
  skus: z.array(z.string()),
  /** Commission rate per tier slug, in percent. */
  rates: z.record(z.string(), z.number()),
  is_default: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type SegmentItem = z.output<typeof segmentSchema>;

export const segmentRecord = (
  merchantId: string,
  segment: Pick<SegmentItem, 'name'> &
    Partial<Pick<SegmentItem, 'uuid' | 'slugs' | 'skus' | 'rates'>> & { description?: string | null; default?: boolean },
  now = isoNow(),
) => {
  const uuid = segment.uuid ?? randomUUID();
  return {
    ...segmentKey(merchantId, uuid),
    type: 'segment',
    uuid,
    name: segment.name,
    description: segment.description ?? '',
    segment_type: 'percentage' as const,
    slugs: segment.slugs ?? [],
    skus: segment.skus ?? [],
    // Keyed by tier slug, which is stored lowercase (tier.ts): a rate given for `Gold` is gold's.
    rates: Object.fromEntries(Object.entries(segment.rates ?? {}).map(([tier, rate]) => [tier.toLowerCase(), rate])),
    is_default: segment.default ?? false,
    created_at: now,
    updated_at: now,
  };
};

export const { key: segmentKey, get: getSegment, all: allSegments } = storedItem('segment', segmentSchema, 'SEGMENT#');
