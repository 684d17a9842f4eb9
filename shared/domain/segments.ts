import { functionTable } from '#shared/db/client';
import { allSegments, getSegment, type SegmentItem } from '#shared/db/entities/segment';
import type { TierItem } from '#shared/db/entities/tier';
import { notFound } from '#shared/errors';
import { type PageQuery, slicePage } from '#shared/page-window';
import { allTiers } from './tiers';

/** List order: the default segment first (it catches every unmatched row), then by name, then uuid. */
const segmentOrder = (a: SegmentItem, b: SegmentItem) =>
  Number(b.is_default) - Number(a.is_default) || a.name.localeCompare(b.name) || a.uuid.localeCompare(b.uuid);

/** One page of segments; the whole (capped) list is one Query. */
export const listSegments = async (merchantId: string, query: PageQuery): Promise<{ total: number; segments: SegmentItem[] }> => {
  const segments = (await allSegments(functionTable, merchantId)).sort(segmentOrder);
  return { total: segments.length, segments: slicePage(segments, query) };
};

/** One segment and, read beside it, the merchant's tiers (for its rates' names). Missing or foreign: 404. */
export const getSegmentWithTiers = async (merchantId: string, uuid: string): Promise<{ segment: SegmentItem; tiers: TierItem[] }> => {
  const [segment, tiers] = await Promise.all([getSegment(functionTable, merchantId, uuid), allTiers(merchantId)]);
  if (!segment) throw notFound();
  return { segment, tiers };
};
