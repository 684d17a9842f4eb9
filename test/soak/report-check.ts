import { reportTotalsDifferences } from '#shared/admin/report';
import type { CommissionLedger } from '#shared/db/entities/commission';
import type { TableRef } from '#shared/db/table-def';

/**
 * The soak's invariant for commission reports: once the change feed has settled, the report
 * totals of every merchant equal what its commission ledgers add up to, per affiliate, UTC day,
 * month and currency (orders, sales value, accrued, reversed), whatever cancels, shipping changes,
 * retries, lost answers and redelivered events the run produced. Same shape as the invariants of
 * checks.ts: one line per violation.
 */
export const checkReportTotals = async (
  merchants: readonly { store: TableRef; id: string; ledgers: Map<string, CommissionLedger | undefined> }[],
) => {
  const result = {
    id: 'report-totals',
    title: 'Report totals equal the sum of the ledgers',
    checked: 0,
    violations: [] as string[],
    notes: new Map<string, number>(),
  };
  for (const merchant of merchants) {
    const ledgers = [...merchant.ledgers.values()].filter((ledger): ledger is CommissionLedger => ledger !== undefined);
    result.checked += ledgers.length;
    result.violations.push(...(await reportTotalsDifferences(merchant.store, merchant.id, ledgers)));
  }
  return result;
};
