import { describe, expect, it } from 'vitest';
import { isoNow, oneMonthBefore, toIso } from '#shared/time';

const before = (iso: string) => oneMonthBefore(new Date(iso)).toISOString();

describe('oneMonthBefore (the cancel window)', () => {
  it.each([
    ['2026-03-15T10:20:30.400Z', '2026-02-15T10:20:30.400Z', 'the same day and time of the previous month'],
    ['2026-03-31T12:00:00.000Z', '2026-02-28T12:00:00.000Z', 'Mar 31 -> Feb 28 (clamped to the month end)'],
    ['2028-03-31T12:00:00.000Z', '2028-02-29T12:00:00.000Z', 'Mar 31 -> Feb 29 in a leap year'],
    ['2026-03-29T00:00:00.000Z', '2026-02-28T00:00:00.000Z', 'Mar 29 -> Feb 28 in a common year'],
    ['2026-05-31T23:59:59.999Z', '2026-04-30T23:59:59.999Z', 'May 31 -> Apr 30'],
    ['2026-01-15T08:00:00.000Z', '2025-12-15T08:00:00.000Z', 'January -> December of the previous year'],
    ['2026-01-31T00:00:00.000Z', '2025-12-31T00:00:00.000Z', 'Jan 31 -> Dec 31 of the previous year'],
    ['2026-02-28T06:00:00.000Z', '2026-01-28T06:00:00.000Z', 'Feb 28 -> Jan 28 (not the month end)'],
    ['2026-03-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 'the first of the month'],
  ])('%s -> %s: %s', (from, expected) => {
    expect(before(from)).toBe(expected);
  });

  it('does not change its argument', () => {
    // Prepare
    const date = new Date('2026-03-31T12:00:00.000Z');

    // Act
    oneMonthBefore(date);

    // Assess
    expect(date.toISOString()).toBe('2026-03-31T12:00:00.000Z');
  });
});

describe('timestamps', () => {
  it('are ISO 8601 UTC with milliseconds, so they compare as strings in time order', () => {
    expect(isoNow()).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(toIso('2026-01-05T10:00:00Z')).toBe('2026-01-05T10:00:00.000Z');
    expect(toIso('2026-01-05T12:00:00+02:00')).toBe('2026-01-05T10:00:00.000Z');
    expect(toIso('2026-01-05T09:59:59.999Z') < toIso('2026-01-05T10:00:00Z')).toBe(true);
  });
});
