import { route } from '#functions/routes';
import { toSegmentDetailResponse } from '#shared/domain/program-model';
import { getSegmentWithTiers } from '#shared/domain/segments';
import { apiHandler } from '#shared/http/api-handler';
import { uuidParams } from '#shared/schemas/common';

export const handler = apiHandler(route('segments-get'), { params: uuidParams }, async ({ merchant, params }) => {
  const { segment, tiers } = await getSegmentWithTiers(merchant.id, params.uuid);
  return { data: { segment: toSegmentDetailResponse(segment, tiers) } };
});
