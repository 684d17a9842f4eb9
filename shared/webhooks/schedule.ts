/** The Standard Webhooks retry schedule, each wait jittered ±10%; a longer `Retry-After` wins (tests: WEBHOOK_RETRY_SCHEDULE_SECONDS). */
export const STANDARD_SCHEDULE_SECONDS = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600, 24 * 3600];

export const scheduleFromEnv = (): number[] => {
  const text = process.env.WEBHOOK_RETRY_SCHEDULE_SECONDS;
  if (!text) return STANDARD_SCHEDULE_SECONDS;
  const seconds = text.split(',').map(Number);
  if (seconds.length === 0 || seconds.some((value) => !Number.isFinite(value) || value < 0)) {
    throw new Error('WEBHOOK_RETRY_SCHEDULE_SECONDS must be comma-separated non-negative seconds');
  }
  return seconds;
};

/** A delivery times out after 15 s (WEBHOOK_DELIVERY_TIMEOUT_MS shortens it in tests). */
export const deliveryTimeoutMs = (): number => Number(process.env.WEBHOOK_DELIVERY_TIMEOUT_MS ?? 15_000);

/** The most a receiver's Retry-After can push a retry: a day, the schedule's longest wait. */
const MAX_RETRY_AFTER_SECONDS = 24 * 3600;

/** Seconds in a Retry-After header (delta-seconds or an HTTP date), or undefined when absent or unreadable. */
export const retryAfterSeconds = (header: string | undefined, now: number): number | undefined => {
  if (header === undefined || header.trim() === '') return undefined;
  const trimmed = header.trim();
  const seconds = /^\d+$/.test(trimmed) ? Number(trimmed) : (Date.parse(trimmed) - now) / 1000;
  return Number.isFinite(seconds) ? Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(0, Math.ceil(seconds))) : undefined;
};

/** A wait of `base` seconds, ±10%, to the millisecond: rounded to seconds, a short wait's jitter would be lost. */
const jittered = (base: number, random: () => number) => Math.round(base * 1000 * (0.9 + 0.2 * random())) / 1000;

/** The wait in seconds before the attempt after `attempt` (from 1), or undefined when the schedule is exhausted. */
export const waitBeforeNextAttempt = (attempt: number, retryAfter: number | undefined, schedule: number[], random: () => number) => {
  const base = schedule[attempt];
  if (base === undefined) return undefined;
  return Math.max(jittered(base, random), retryAfter ?? 0);
};

/** Seconds a failing endpoint rests after its `failures`-th failure in a row: the schedule counted per endpoint, one probe at a time. */
export const endpointRestAfterFailures = (failures: number, retryAfter: number | undefined, schedule: number[], random: () => number) => {
  const base = schedule[Math.min(Math.max(1, failures), schedule.length - 1)] ?? 0;
  return Math.max(jittered(base, random), retryAfter ?? 0);
};

/** An endpoint is disabled once its failure streak lasts 5 days, longer than the schedule (a count would disable it in a second). */
const STREAK_LIMIT = { days: 5 } as const;
/** The merchant is e-mailed once a streak reaches this many failed attempts (and again when disabled). */
export const STREAK_NOTICE_AFTER = 5;

export const streakDisables = (failingSince: string, now: number): boolean =>
  now - Date.parse(failingSince) >= STREAK_LIMIT.days * 24 * 3600 * 1000;
