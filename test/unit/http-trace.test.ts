import { describe, expect, it } from 'vitest';
import { newTraceId, TRACE_ID_PATTERN } from '#shared/http/trace';

describe('newTraceId', () => {
  it('is the UTC date-time to the second, ":api:", and 8 hex characters', () => {
    // Act
    const id = newTraceId(new Date('2026-11-22T06:01:02.345Z'));

    // Assess
    expect(id).toMatch(/^2026-11-22T06:01:02Z:api:[0-9a-f]{8}$/);
    expect(id).toMatch(TRACE_ID_PATTERN);
  });

  it('uses the current time by default', () => {
    // Prepare
    const before = Math.floor(Date.now() / 1000) * 1000;

    // Act
    const id = newTraceId();

    // Assess
    const stamped = Date.parse(id.slice(0, id.indexOf(':api:')));
    expect(stamped).toBeGreaterThanOrEqual(before);
    expect(stamped).toBeLessThanOrEqual(Date.now());
  });

  it('differs between calls in the same second', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const ids = new Set(Array.from({ length: 50 }, () => newTraceId(now)));
    expect(ids.size).toBe(50);
  });

  it('the pattern refuses other shapes', () => {
    expect(TRACE_ID_PATTERN.test('2026-11-22T06:01:02.345Z:api:7f3a9c1e')).toBe(false);
    expect(TRACE_ID_PATTERN.test('2026-11-22T06:01:02Z:api:7F3A9C1E')).toBe(false);
    expect(TRACE_ID_PATTERN.test('2026-11-22T06:01:02Z:web:7f3a9c1e')).toBe(false);
  });
});
