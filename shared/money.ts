/** Exact commission arithmetic in BigInt, rounded once half up; what does not fit no retry helps (docs/design-notes.md#limits). */
export class AmountNotComputableError extends Error {
  override name = 'AmountNotComputableError';
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Hundredths of a percent in a whole: 100 % = 10,000. */
const WHOLE = 10_000n;

/** `value` as an exact integer: a safe integer, and not negative unless `signed`. */
const exactInteger = (value: unknown, what: string, signed = false): bigint => {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || (!signed && value < 0)) {
    throw new AmountNotComputableError(`${what} ${String(value)} is not a ${signed ? '' : 'non-negative '}safe integer`);
  }
  return BigInt(value);
};

const toSafeNumber = (value: bigint, what: string): number => {
  if (value > MAX_SAFE || value < -MAX_SAFE) throw new AmountNotComputableError(`${what} ${value} exceeds 2^53 - 1`);
  return Number(value);
};

/** A percentage in [0, 100] as hundredths of a percent (12.5 -> 1250; 0.1 + 0.2 -> 30). */
export const rateInHundredths = (rate: unknown): bigint => {
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > 100) {
    throw new AmountNotComputableError(`rate ${String(rate)} is not a percentage between 0 and 100`);
  }
  return BigInt(Math.round(rate * 100));
};

/** One row: base = price * quantity, amount = round(base * rate / 100), both exact. */
export const rowCommission = (priceValue: unknown, quantity: unknown, rate: unknown): { base: number; amount: number } => {
  const base = exactInteger(priceValue, 'price_value') * exactInteger(quantity, 'quantity');
  const amount = (base * rateInHundredths(rate) + WHOLE / 2n) / WHOLE;
  return { base: toSafeNumber(base, 'base value'), amount: toSafeNumber(amount, 'commission amount') };
};

/** The exact sum of amounts, refused if it leaves the safe range. */
export const sumExact = (values: readonly number[], what = 'total amount'): number =>
  toSafeNumber(
    values.reduce((sum, value) => sum + exactInteger(value, what), 0n),
    what,
  );

/** The exact sum of signed amounts (a ledger's accruals and reversals), refused if it leaves the safe range. */
export const netExact = (values: readonly number[], what = 'net amount'): number =>
  toSafeNumber(
    values.reduce((sum, value) => sum + exactInteger(value, what, true), 0n),
    what,
  );
