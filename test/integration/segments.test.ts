import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, merchantFixture, seed } from './helpers';

let acme: SeededMerchant;

beforeAll(async () => {
  const seeded = await seed([
    merchantFixture({
      key: 'acme',
      tiers: [
        { slug: 'silver', name: 'Silver' },
        { slug: 'gold', name: 'Gold' },
      ],
      segments: [
        {
          key: 'shoes',
          name: 'Shoes',
          description: 'Footwear',
          slugs: ['shoes', 'boots'],
          skus: ['SKU-1'],
          rates: { gold: 12.5, silver: 9 },
        },
        { key: 'default', name: 'Default', description: 'Everything else', default: true, rates: { gold: 10 } },
        { key: 'bags', name: 'Bags', slugs: ['bags'] },
      ],
    }),
    merchantFixture({ key: 'other', segments: [{ key: 'theirs', name: 'Theirs', default: true }], affiliates: [] }),
  ]);
  acme = seeded.acme as SeededMerchant;
});

const live = () => api('live', acme.tokens.live);

describe('GET /api/v2/segments', () => {
  it("lists the merchant's segments without tiers: default first, then by name", async () => {
    const res = await live().get('/api/v2/segments');
    expect(res.status).toBe(200);
    expect(res.body.data.segments.map((segment: { name: string }) => segment.name)).toEqual(['Default', 'Bags', 'Shoes']);
    expect(res.body.data.segments[2]).toEqual({
      uuid: acme.segments.shoes,
      name: 'Shoes',
      description: 'Footwear',
      type: { name: 'Percentage', slug: 'percentage' },
      slugs: ['shoes', 'boots'],
      skus: ['SKU-1'],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    for (const segment of res.body.data.segments) expect(segment).not.toHaveProperty('tiers');
    expect(res.body.meta.pagination).toEqual({
      current_page: 1,
      last_page: 1,
      per_page: 15,
      total: 3,
      next_page_url: null,
      prev_page_url: null,
    });
  });

  it('pages with exact totals', async () => {
    const res = await live().get('/api/v2/segments?per_page=2&page=2');
    expect(res.body.data.segments.map((segment: { name: string }) => segment.name)).toEqual(['Shoes']);
    expect(res.body.meta.pagination).toMatchObject({ current_page: 2, last_page: 2, total: 3 });
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get('/api/v2/segments')).status).toBe(401);
  });
});

describe('GET /api/v2/segments/{uuid}', () => {
  it('returns the segment with its tiers: rate as a number, visual_rate as its display string', async () => {
    const res = await live().get(`/api/v2/segments/${acme.segments.shoes}`);
    expect(res.status).toBe(200);
    expect(res.body.data.segment).toEqual({
      uuid: acme.segments.shoes,
      name: 'Shoes',
      description: 'Footwear',
      type: { name: 'Percentage', slug: 'percentage' },
      slugs: ['shoes', 'boots'],
      skus: ['SKU-1'],
      tiers: [
        { name: 'Gold', slug: 'gold', rate: 12.5, visual_rate: '12.5%' },
        { name: 'Silver', slug: 'silver', rate: 9, visual_rate: '9%' },
      ],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const bags = await live().get(`/api/v2/segments/${acme.segments.bags}`);
    expect(bags.body.data.segment.tiers).toEqual([]);
  });

  it("answers 404 for a missing segment and a path that is not a UUID (another merchant's: tenant-isolation.test.ts)", async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await live().get(`/api/v2/segments/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.errors).toEqual({ message: ['Not Found'] });
    }
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get(`/api/v2/segments/${acme.segments.shoes}`)).status).toBe(401);
  });
});
