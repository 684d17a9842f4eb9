import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, merchantFixture, seed } from './helpers';

let acme: SeededMerchant;

const ACCEPTED_AT = '2026-01-15T09:00:00.000Z';

beforeAll(async () => {
  const seeded = await seed([
    merchantFixture({
      key: 'acme',
      tiers: [
        { slug: 'gold', name: 'Gold' },
        { slug: 'silver', name: 'Silver', default: true },
      ],
      affiliates: [
        { slug: 'alice', name: 'Alice', email: 'alice@example.com', tier: 'gold', status: 'active', accepted_at: ACCEPTED_AT },
        { slug: 'ivan', name: 'Ivan', email: 'ivan@example.com', status: 'inactive' },
        { slug: 'sam', name: 'Sam', email: 'sam@example.com', tier: 'silver', status: 'active' },
      ],
      affiliate_requests: [{ key: 'newbie', affiliate: { slug: 'newbie', name: 'Newbie', email: 'newbie@example.com' } }],
    }),
    merchantFixture({ key: 'other', affiliates: [{ slug: 'olga', name: 'Olga', email: 'olga@example.com', status: 'active' }] }),
  ]);
  acme = seeded.acme as SeededMerchant;
});

const live = () => api('live', acme.tokens.live);
const slugs = (res: { body: { data: { affiliates: { slug: string }[] } } }) => res.body.data.affiliates.map((affiliate) => affiliate.slug);

describe('GET /api/v2/affiliates', () => {
  it("lists only the merchant's affiliates, in the spec's shape, with Laravel pagination", async () => {
    const res = await live().get('/api/v2/affiliates');
    expect(res.status).toBe(200);
    expect([...slugs(res)].sort()).toEqual(['alice', 'ivan', 'sam']);
    const alice = res.body.data.affiliates.find((affiliate: { slug: string }) => affiliate.slug === 'alice');
    expect(alice).toEqual({
      name: 'Alice',
      slug: 'alice',
      status: 'active',
      tier: { name: 'Gold', slug: 'gold' },
      accepted_at: ACCEPTED_AT,
      created_at: expect.any(String),
    });
    const ivan = res.body.data.affiliates.find((affiliate: { slug: string }) => affiliate.slug === 'ivan');
    // seeded without a tier: the merchant's default tier (every affiliate has one)
    expect(ivan).toMatchObject({ status: 'inactive', tier: { name: 'Silver', slug: 'silver' }, accepted_at: null });
    expect(res.body.meta.pagination).toEqual({
      current_page: 1,
      last_page: 1,
      per_page: 15,
      total: 3,
      next_page_url: null,
      prev_page_url: null,
    });
  });

  it('filters by tier_slug (any casing); an unknown tier matches nothing', async () => {
    const gold = await live().get('/api/v2/affiliates?tier_slug=GOLD');
    expect(gold.status).toBe(200);
    expect(slugs(gold)).toEqual(['alice']);
    expect(gold.body.meta.pagination.total).toBe(1);
    const none = await live().get('/api/v2/affiliates?tier_slug=diamond');
    expect(none.body.data.affiliates).toEqual([]);
    expect(none.body.meta.pagination).toMatchObject({ total: 0, last_page: 1 });
  });

  it('answers an unknown tier of 255 characters of any plane with an empty list, though its keys would be too long to store', async () => {
    // Act
    const answers = await Promise.all(
      ['é', '漢', '\u{1F600}'].map((char) => live().get(`/api/v2/affiliates?tier_slug=${encodeURIComponent(char.repeat(255))}`)),
    );

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    for (const answer of answers) expect(answer.body.meta.pagination).toMatchObject({ total: 0, last_page: 1 });
  });

  it('lists newest first: an affiliate accepted now comes before the seeded ones', async () => {
    expect((await live().post(`/api/v2/affiliate-requests/${acme.affiliate_requests.newbie}/accept`)).status).toBe(200);
    const page1 = await live().get('/api/v2/affiliates?per_page=2');
    expect(slugs(page1)[0]).toBe('newbie');
    expect(page1.body.meta.pagination).toMatchObject({
      total: 4,
      last_page: 2,
      next_page_url: expect.stringMatching(/per_page=2&page=2$/),
    });
    const page2 = await live().get('/api/v2/affiliates?per_page=2&page=2');
    expect(slugs(page2)).toHaveLength(2);
    expect([...slugs(page1), ...slugs(page2)].sort()).toEqual(['alice', 'ivan', 'newbie', 'sam']);
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get('/api/v2/affiliates')).status).toBe(401);
  });
});

describe('GET /api/v2/affiliates/{slug}', () => {
  it('returns the affiliate with its tier, whatever the casing of the slug', async () => {
    for (const slug of ['sam', 'SAM']) {
      const res = await live().get(`/api/v2/affiliates/${slug}`);
      expect(res.status).toBe(200);
      expect(res.body.data.affiliate).toEqual({
        name: 'Sam',
        slug: 'sam',
        status: 'active',
        tier: { name: 'Silver', slug: 'silver' },
        accepted_at: expect.any(String),
        created_at: expect.any(String),
      });
    }
  });

  it("answers 404 for an unknown affiliate (another merchant's: tenant-isolation.test.ts)", async () => {
    const res = await live().get('/api/v2/affiliates/nobody');
    expect(res.status).toBe(404);
    expect(res.body.errors).toEqual({ message: ['Not Found'] });
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get('/api/v2/affiliates/alice')).status).toBe(401);
  });
});
