/**
 * How long the change feed keeps retrying a record whose reactions fail before it parks the record
 * (with its content) and moves on: at least `tries` attempts over at least `seconds` since its
 * first failure, so a dependency's brief outage is ridden out, and a record that keeps failing on
 * its own holds the records behind it on its shard for a bounded time only.
 */
export type ParkPolicy = { tries: number; seconds: number };

export const DEFAULT_PARK_POLICY: ParkPolicy = { tries: 5, seconds: 30 };

/** Parses FEED_PARK_AFTER (`<tries>,<seconds>`); the default when unset. */
export const parkPolicyFromEnv = (value = process.env.FEED_PARK_AFTER): ParkPolicy => {
  if (value === undefined || value === '') return DEFAULT_PARK_POLICY;
  const [tries, seconds] = value.split(',').map(Number);
  if (!Number.isSafeInteger(tries) || !Number.isFinite(seconds) || (tries ?? 0) < 1 || (seconds ?? -1) < 0) {
    throw new Error(`FEED_PARK_AFTER must be "<tries>,<seconds>", not ${value}`);
  }
  return { tries: tries as number, seconds: seconds as number };
};

/** At most this many records' failures are remembered (the oldest are forgotten first). */
const MAX_TRACKED = 10_000;

/**
 * The failures this container has seen per record (by stream event id). A shard's batches are
 * normally read by one container at a time, so its retries are counted here; a record that moves
 * to a new container starts again from nothing, which delays its parking but never hastens it.
 */
export const createFailureTracker = (policy: ParkPolicy) => {
  const seen = new Map<string, { tries: number; first: number }>();
  return {
    /** Counts a failure of `id`; true when the record has now failed long enough to be parked. */
    failed(id: string, now = Date.now()): boolean {
      const entry = seen.get(id) ?? { tries: 0, first: now };
      entry.tries += 1;
      seen.delete(id);
      seen.set(id, entry);
      if (seen.size > MAX_TRACKED) seen.delete(seen.keys().next().value as string);
      return entry.tries >= policy.tries && now - entry.first >= policy.seconds * 1000;
    },
    /** Forgets `id` (its reactions were carried out, or it was parked). */
    done(id: string) {
      seen.delete(id);
    },
    tries: (id: string) => seen.get(id)?.tries ?? 0,
  };
};
