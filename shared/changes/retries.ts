/** The change feed parks a record after at least `tries` attempts over at least `seconds`: an outage is ridden out, a bad record not. */
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

/** At most this many records' failures (and merchants) are remembered (the oldest are forgotten first). */
const MAX_TRACKED = 10_000;

/** How many of the policy's durations a merchant counts as failing after one of its records was parked. */
const FAILING_MERCHANT_POLICIES = 10;

/** The failures this container has seen per record, and the reactions a record read again has carried out. */
export const createFailureTracker = (policy: ParkPolicy) => {
  const seen = new Map<string, { tries: number; first: number }>();
  const carried = new Map<string, ReadonlySet<string>>();
  /** When each merchant last had a record parked for failing reactions, until one of its records goes through. */
  const parkedMerchants = new Map<string, number>();
  /** Moves `id` to the newest end of `map`, forgetting the oldest entry past MAX_TRACKED. */
  const remember = <V>(map: Map<string, V>, id: string, value: V) => {
    map.delete(id);
    map.set(id, value);
    if (map.size > MAX_TRACKED) map.delete(map.keys().next().value as string);
  };
  return {
    /** Counts a failure of `id`; true when the record has now failed long enough to be parked. */
    failed(id: string, now = Date.now()): boolean {
      const entry = seen.get(id) ?? { tries: 0, first: now };
      entry.tries += 1;
      remember(seen, id, entry);
      return entry.tries >= policy.tries && now - entry.first >= policy.seconds * 1000;
    },
    /** Notes reactions of `id` carried out in a batch that will be read again: not done again. */
    carriedOut(id: string, kinds: readonly string[]) {
      if (kinds.length > 0) remember(carried, id, new Set([...(carried.get(id) ?? []), ...kinds]));
    },
    carried: (id: string): ReadonlySet<string> => carried.get(id) ?? new Set(),
    /** Forgets `id` (its reactions were carried out, or it was parked). */
    done(id: string) {
      seen.delete(id);
      carried.delete(id);
    },
    tries: (id: string) => seen.get(id)?.tries ?? 0,
    /** Notes that a record of `merchantId` was parked because its reactions kept failing. */
    merchantParked(merchantId: string, now = Date.now()) {
      remember(parkedMerchants, merchantId, now);
    },
    /** Notes that a record of `merchantId` went through: its next failing record gets the whole policy again. */
    merchantWentThrough(merchantId: string) {
      parkedMerchants.delete(merchantId);
    },
    /** Whether `merchantId` had a record parked lately and none went through since: its next failing one is parked at once. */
    merchantFailing(merchantId: string, now = Date.now()): boolean {
      const at = parkedMerchants.get(merchantId);
      return at !== undefined && now - at <= FAILING_MERCHANT_POLICIES * policy.seconds * 1000;
    },
  };
};
