import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, merchantFixture, seed, TRACE_ID } from './helpers';

let acme: SeededMerchant;

beforeAll(async () => {
  const seeded = await seed([
    merchantFixture({
      key: 'acme',
      tiers: [
        { slug: 'silver', name: 'Silver', description: 'Growing partners' },
        { slug: 'gold', name: 'Gold', description: 'Top partners' },
        { slug: 'bronze', name: 'Bronze' },
      ],
    }),
    merchantFixture({ key: 'other', tiers: [{ slug: 'platinum', name: 'Platinum' }], affiliates: [] }),
  ]);
  acme = seeded.acme as SeededMerchant;
});

const live = () => api('live', acme.tokens.live);

describe('GET /api/v2/tiers', () => {
  it("lists only the merchant's tiers, by name, in the spec's shape with Laravel pagination", async () => {
    const res = await live().get('/api/v2/tiers');
    expect(res.status).toBe(200);
    expect(res.body.data.tiers.map((tier: { slug: string }) => tier.slug)).toEqual(['bronze', 'gold', 'silver']);
    expect(res.body.data.tiers[1]).toEqual({
      name: 'Gold',
      slug: 'gold',
      description: 'Top partners',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(res.body.data.tiers[0].description).toBe('');
    expect(res.body.meta).toEqual({
      pagination: { current_page: 1, last_page: 1, per_page: 15, total: 3, next_page_url: null, prev_page_url: null },
      trace_id: expect.stringMatching(TRACE_ID),
    });
  });

  it('pages with exact totals', async () => {
    const page1 = await live().get('/api/v2/tiers?per_page=2');
    expect(page1.body.data.tiers.map((tier: { slug: string }) => tier.slug)).toEqual(['bronze', 'gold']);
    expect(page1.body.meta.pagination).toMatchObject({
      current_page: 1,
      last_page: 2,
      per_page: 2,
      total: 3,
      next_page_url: expect.stringMatching(/\/api\/v2\/tiers\?per_page=2&page=2$/),
    });
    const page2 = await live().get('/api/v2/tiers?per_page=2&page=2');
    expect(page2.body.data.tiers.map((tier: { slug: string }) => tier.slug)).toEqual(['silver']);
    expect(page2.body.meta.pagination).toMatchObject({
      current_page: 2,
      next_page_url: null,
      prev_page_url: expect.stringMatching(/page=1$/),
    });
    expect((await live().get('/api/v2/tiers?per_page=2&page=5')).body.data.tiers).toEqual([]);
  });

  it('answers 422 for a bad per_page', async () => {
    const res = await live().get('/api/v2/tiers?per_page=0');
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['per_page']);
  });

  it('answers 401 without a token or with an unknown one', async () => {
    for (const token of [undefined, 'live_unknownunknownunknownunknownunknown00']) {
      const res = await api('live', token).get('/api/v2/tiers');
      expect(res.status).toBe(401);
      expect(res.body.errors).toEqual({ message: ['Unauthenticated.'] });
    }
  });
});

describe('GET /api/v2/tiers/{slug}', () => {
  it('returns the tier, whatever the casing of the slug', async () => {
    for (const slug of ['gold', 'GOLD']) {
      const res = await live().get(`/api/v2/tiers/${slug}`);
      expect(res.status).toBe(200);
      expect(res.body.data.tier).toEqual({
        name: 'Gold',
        slug: 'gold',
        description: 'Top partners',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
    }
  });

  it("answers 404 for a missing tier (another merchant's: tenant-isolation.test.ts)", async () => {
    const res = await live().get('/api/v2/tiers/nope');
    expect(res.status).toBe(404);
    expect(res.body.errors).toEqual({ message: ['Not Found'] });
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get('/api/v2/tiers/gold')).status).toBe(401);
  });
});
