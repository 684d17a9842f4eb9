import { describe, expect, it } from 'vitest';
import { fixtureProblems, MAX_SLUG_BYTES, MAX_TIER_BUCKET_LENGTH, parseFixture } from '#shared/admin/fixture';

const merchant = (extra: Record<string, unknown> = {}) => ({ key: 'm', name: 'M', currency: 'EUR', ...extra });

describe('fixtureProblems (what the seed checks before it writes anything)', () => {
  it('names every repeated key, unknown reference and foreign currency of a fixture, merchant by merchant', () => {
    // Prepare
    const order = (key: string, order_no: string, affiliate_slug: string, currency_code = 'EUR') => ({
      key,
      order_no,
      affiliate_slug,
      currency_code,
      total_shipping_value: 0,
      order_rows: [{ product_name: 'Tent', price_value: 1, quantity: 1 }],
    });
    const fixture = parseFixture({
      merchants: [
        merchant({
          tiers: [{ slug: 'gold', name: 'Gold' }],
          segments: [
            { key: 'default', name: 'Default', default: true, rates: { gold: 10, platinum: 12, Gold: 11 } },
            { key: 'shoes', name: 'Shoes', default: true, slugs: ['shoes', 'SHOES'], rates: { gold: 12 } },
            { key: 'boots', name: 'Boots', slugs: ['Shoes'], rates: { gold: 12 } },
          ],
          affiliates: [
            { slug: 'alice', name: 'Alice', email: 'a@example.com', tier: 'silver' },
            { slug: 'ALICE', name: 'Alice again', email: 'b@example.com' },
          ],
          orders: [order('a', 'X-1', 'alice'), order('b', 'X-1', 'bob'), order('c', 'X-2', 'alice', 'USD')],
        }),
        merchant({ currency: 'XYZ' }),
      ],
    });

    // Act
    const problems = fixtureProblems(fixture);

    // Assess
    expect(problems).toEqual([
      'merchant key "m" is used twice',
      'merchant m: segment slug "shoes" is used twice',
      'merchant m: default segment "default" is used twice',
      'merchant m: affiliate slug "alice" is used twice',
      'merchant m: order_no "X-1" is used twice',
      'merchant m: affiliate alice: tier silver is not in the fixture',
      'merchant m: segment default: a rate for tier platinum, which is not in the fixture',
      'merchant m: segment default: two rates for tier "gold"',
      'merchant m: order b: affiliate bob is not in the fixture',
      "merchant m: order c: currency USD is not the merchant's (EUR)",
      'merchant m: currency XYZ is not an ISO 4217 code',
    ]);
  });

  it('refuses a token value given to two merchants: a token opens one merchant, found by its hash', () => {
    // Prepare
    const value = `live_${'a'.repeat(40)}`;
    const fixture = parseFixture({
      merchants: [merchant({ key: 'a', tokens: [{ key: 'live', value }] }), merchant({ key: 'b', tokens: [{ key: 'live', value }] })],
    });

    // Act
    const problems = fixtureProblems(fixture);

    // Assess
    expect(problems).toEqual(['a token value is used twice (a token opens one merchant)']);
  });

  it('refuses a slug too long for the keys it becomes part of, though the API takes 255 characters of any plane', () => {
    // Prepare
    const slug = '\u{1F3D5}'.repeat(255);
    const fixture = parseFixture({ merchants: [merchant({ affiliates: [{ slug, name: 'Long', email: 'l@example.com' }] })] });

    // Act
    const problems = fixtureProblems(fixture);

    // Assess
    expect(problems).toEqual([`merchant m: slug ${slug} is over ${MAX_SLUG_BYTES} UTF-8 bytes, too long for its keys`]);
  });

  it("refuses a join request's slug too long for the affiliate's keys its accept would write", () => {
    // Prepare
    const slug = '\u{1F3D5}'.repeat(200);
    const fixture = parseFixture({
      merchants: [merchant({ affiliate_requests: [{ key: 'r', affiliate: { slug, name: 'Long', email: 'l@example.com' } }] })],
    });

    // Act
    const problems = fixtureProblems(fixture);

    // Assess
    expect(problems).toEqual([`merchant m: slug ${slug} is over ${MAX_SLUG_BYTES} UTF-8 bytes, too long for its keys`]);
  });

  it("refuses a tier slug too long for its list counts' keys once percent-encoded, though short enough in bytes", () => {
    // Prepare: 200 Cyrillic letters, 400 bytes, 1,200 characters percent-encoded
    const slug = 'ж'.repeat(200);
    const fixture = parseFixture({ merchants: [merchant({ tiers: [{ slug, name: 'Long' }] })] });

    // Act
    const problems = fixtureProblems(fixture);

    // Assess
    expect(problems).toEqual([
      `merchant m: tier ${slug} is over ${MAX_TIER_BUCKET_LENGTH} characters once percent-encoded, too long for its list counts' keys`,
    ]);
  });

  it.each([150, -5, 12.345])('refuses a segment rate of %s: a commission is computed from 0 to 100 percent in hundredths', (rate) => {
    expect(() => parseFixture({ merchants: [merchant({ segments: [{ key: 's', name: 'S', rates: { gold: rate } }] })] })).toThrow(
      /merchants\.0\.segments\.0\.rates\.gold/,
    );
  });

  it("says a field's problem in the API's words, with its path in the fixture", () => {
    expect(() => parseFixture({ merchants: [{ key: 'm', currency: 'EUR' }] })).toThrow(
      'merchants.0.name: The merchants.0.name field is required.',
    );
  });
});
