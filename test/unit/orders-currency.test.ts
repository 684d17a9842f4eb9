import { describe, expect, it } from 'vitest';
import { currencyName, isKnownCurrency } from '#shared/domain/currency';

describe('isKnownCurrency', () => {
  it.each(['EUR', 'USD', 'SEK', 'JPY', 'eur', 'Usd'])('knows %s, in any casing', (code) => {
    expect(isKnownCurrency(code)).toBe(true);
  });

  it.each(['ZZZ', 'EU', 'EURO', '', '123'])('does not know %j', (code) => {
    expect(isKnownCurrency(code)).toBe(false);
  });
});

describe('currencyName', () => {
  it.each([
    ['EUR', 'Euro'],
    ['usd', 'US Dollar'],
    ['SEK', 'Swedish Krona'],
  ])('names %s "%s"', (code, name) => {
    expect(currencyName(code)).toBe(name);
  });

  it('falls back to the upper-cased code for a code without a name', () => {
    expect(currencyName('zzz')).toBe('ZZZ');
  });
});
