/** Page arithmetic, with no HTTP in it (shared/http/pagination.ts builds the response's block from it). */
export type PageQuery = { per_page: number; page: number };

export const lastPage = (total: number, perPage: number) => Math.max(1, Math.ceil(total / perPage));

/** Where page `page` starts and how many items it holds, for a list of `total` items. */
export const pageWindow = (total: number, { page, per_page }: PageQuery) => {
  const offset = (page - 1) * per_page;
  return { offset, count: Math.max(0, Math.min(per_page, total - offset)) };
};

/** One page of a list that was read whole (small per-merchant lists: tiers, segments, ...). */
export const slicePage = <T>(items: readonly T[], query: PageQuery): T[] => {
  const { offset, count } = pageWindow(items.length, query);
  return items.slice(offset, offset + count);
};
