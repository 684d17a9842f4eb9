const KNOWN = new Set(Intl.supportedValuesOf('currency'));
const names = new Intl.DisplayNames(['en'], { type: 'currency' });

/** ISO 4217 codes known to the runtime's ICU data. */
export const isKnownCurrency = (code: string): boolean => KNOWN.has(code.toUpperCase());

export const currencyName = (code: string): string => names.of(code.toUpperCase()) ?? code.toUpperCase();
