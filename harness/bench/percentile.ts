/** The p-th percentile (nearest rank) of some figures; NaN for none. The one definition the bench's parts share. */
export const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

/** The p50 and p99 of some figures. */
export const p50p99 = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99) });
