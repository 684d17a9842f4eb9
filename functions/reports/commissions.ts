import { route } from '#functions/routes';
import { functionTable } from '#shared/db/client';
import { commissionReport } from '#shared/domain/reports';
import { apiHandler } from '#shared/http/api-handler';
import { laravelPagination } from '#shared/http/pagination';
import { reportQuery } from '#shared/schemas/reports';

export const handler = apiHandler(route('reports-commissions'), { query: reportQuery }, async ({ merchant, query, link }) => {
  const { rows, total, as_of } = await commissionReport(functionTable, merchant.id, query);
  return { data: { rows }, meta: { pagination: laravelPagination(total, query, link), as_of } };
});
