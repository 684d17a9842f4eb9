import { route } from '#functions/routes';
import { toSegmentResponse } from '#shared/domain/program-model';
import { listSegments } from '#shared/domain/segments';
import { apiHandler } from '#shared/http/api-handler';
import { laravelPagination } from '#shared/http/pagination';
import { programListQuery } from '#shared/schemas/program';

export const handler = apiHandler(route('segments-list'), { query: programListQuery }, async ({ merchant, query, link }) => {
  const { total, segments } = await listSegments(merchant.id, query);
  return { data: { segments: segments.map(toSegmentResponse) }, meta: { pagination: laravelPagination(total, query, link) } };
});
