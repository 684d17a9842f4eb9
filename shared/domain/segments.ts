import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, functionTable, TABLE_NAME } from '../db/client';
import { keys, SK } from '../db/keys';
import { notFound } from '../http/errors';
import { slicePage, type PageQuery } from '../http/pagination';
import type { SegmentItem, TierItem } from './program-model';
import { queryPrefix } from './program-store';
import { allTiers } from './tiers';

/** List order: the default segment first (it catches every unmatched row), then by name, then uuid. */
export const segmentOrder = (a: SegmentItem, b: SegmentItem) =>
  Number(b.is_default) - Number(a.is_default) || a.name.localeCompare(b.name) || a.uuid.localeCompare(b.uuid);

/** One page of segments; the whole list is one Query on the merchant partition (SEGMENT# prefix). */
export const listSegments = async (merchantId: string, query: PageQuery): Promise<{ total: number; segments: SegmentItem[] }> => {
  const segments = (await queryPrefix<SegmentItem>(functionTable, merchantId, SK.segment)).sort(segmentOrder);
  return { total: segments.length, segments: slicePage(segments, query) };
};

/**
 * One segment with the tiers its rates name: a GetItem and, in parallel, the merchant's tiers
 * (one Query), which give each rate its tier name. Missing or foreign: 404.
 */
export const getSegmentWithTiers = async (merchantId: string, uuid: string): Promise<{ segment: SegmentItem; tiers: TierItem[] }> => {
  const [{ Item }, tiers] = await Promise.all([
    ddb.send(new GetCommand({ TableName: TABLE_NAME, Key: keys.segment(merchantId, uuid) })),
    allTiers(merchantId),
  ]);
  if (!Item) throw notFound();
  return { segment: Item as SegmentItem, tiers };
};
