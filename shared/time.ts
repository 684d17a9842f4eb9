/** Every stored timestamp uses this one format, so ISO strings compare in time order. */
export const isoNow = (): string => new Date().toISOString();

export const toIso = (value: string | Date): string => new Date(value).toISOString();

/** The month `count` months after `month` (`YYYY-MM`, UTC). */
export const addMonths = (month: string, count: number): string => {
  const at = new Date(`${month}-01T00:00:00Z`);
  at.setUTCMonth(at.getUTCMonth() + count);
  return at.toISOString().slice(0, 7);
};

/** The day `count` days after `day` (`YYYY-MM-DD`, UTC). */
export const addDays = (day: string, count: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + count * 24 * 3600 * 1000).toISOString().slice(0, 10);

/** The same instant one calendar month earlier (Laravel's subMonth, clamped to the month's end). */
export const oneMonthBefore = (date: Date): Date => {
  const result = new Date(date);
  const day = result.getUTCDate();
  result.setUTCDate(1);
  result.setUTCMonth(result.getUTCMonth() - 1);
  const lastDay = new Date(Date.UTC(result.getUTCFullYear(), result.getUTCMonth() + 1, 0)).getUTCDate();
  result.setUTCDate(Math.min(day, lastDay));
  return result;
};
