import type { FilterPattern } from '#functions/workers';

/** Lambda event filtering (FilterCriteria), only the part our patterns use (docs/architecture.md#the-local-stream-poller). */

const isScalar = (value: unknown): value is string | number | boolean | null =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value);

/** Throws when a pattern uses what this matcher does not read. */
export const checkFilterPattern = (pattern: FilterPattern, path = ''): void => {
  for (const [field, rule] of Object.entries(pattern)) {
    if (Array.isArray(rule)) {
      if (!rule.every(isScalar)) throw new Error(`Filter pattern at ${path}${field}: only lists of plain values are supported locally`);
    } else checkFilterPattern(rule as FilterPattern, `${path}${field}.`);
  }
};

const matchesValue = (value: unknown, allowed: readonly unknown[]) =>
  Array.isArray(value) ? value.some((element) => allowed.includes(element)) : allowed.includes(value);

const matchesPattern = (event: unknown, pattern: FilterPattern): boolean =>
  Object.entries(pattern).every(([field, rule]) => {
    if (typeof event !== 'object' || event === null || !(field in event)) return false;
    const value = (event as Record<string, unknown>)[field];
    return Array.isArray(rule) ? matchesValue(value, rule) : matchesPattern(value, rule as FilterPattern);
  });

/** Whether an event passes the filters: no filters pass everything, else any one pattern must match. */
export const passesFilters = (event: unknown, patterns: readonly FilterPattern[]): boolean =>
  patterns.length === 0 || patterns.some((pattern) => matchesPattern(event, pattern));
