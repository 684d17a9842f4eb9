import { describe, expect, it } from 'vitest';
import { affiliateRecord } from '#shared/db/entities/affiliate';
import { affiliateRequestRecord } from '#shared/db/entities/affiliate-request';
import { segmentRecord } from '#shared/db/entities/segment';
import { tierRecord } from '#shared/db/entities/tier';
import {
  affiliateOnAccept,
  formatVisualRate,
  toAcceptedRequestResponse,
  toAffiliateRequestResponse,
  toAffiliateResponse,
  toSegmentDetailResponse,
  toSegmentResponse,
} from '#shared/domain/program-model';

const M = 'merchant-1';
const NOW = '2026-03-01T10:00:00.000Z';

describe('formatVisualRate', () => {
  it('shows a percentage with at most two decimals and no trailing zeros', () => {
    expect(formatVisualRate(12.5)).toBe('12.5%');
    expect(formatVisualRate(10)).toBe('10%');
    expect(formatVisualRate(7.25)).toBe('7.25%');
    expect(formatVisualRate(0)).toBe('0%');
    expect(formatVisualRate(0.1 + 0.2)).toBe('0.3%');
    expect(formatVisualRate(33.33333)).toBe('33.33%');
  });
});

describe('segment presenters', () => {
  const gold = tierRecord(M, { slug: 'gold', name: 'Gold' }, NOW);
  const bronze = tierRecord(M, { slug: 'bronze', name: 'Bronze' }, NOW);
  const silver = tierRecord(M, { slug: 'silver', name: 'Silver' }, NOW);
  const segment = segmentRecord(M, { name: 'Shoes', slugs: ['shoes'], skus: ['SKU-1'], rates: { gold: 12.5, silver: 9, gone: 3 } }, NOW);

  it('lists a segment without tiers and with its type object', () => {
    const listed = toSegmentResponse(segment);
    expect(listed).not.toHaveProperty('tiers');
    expect(listed.type).toEqual({ name: 'Percentage', slug: 'percentage' });
    expect(Object.keys(listed)).toEqual(['uuid', 'name', 'description', 'type', 'slugs', 'skus', 'created_at', 'updated_at']);
  });

  it('gives the single segment the tiers that have a rate, by name, rate as a number and its display form', () => {
    const detail = toSegmentDetailResponse(segment, [silver, bronze, gold]);
    expect(detail.tiers).toEqual([
      { name: 'Gold', slug: 'gold', rate: 12.5, visual_rate: '12.5%' },
      { name: 'Silver', slug: 'silver', rate: 9, visual_rate: '9%' },
    ]);
  });
});

describe('a segment record', () => {
  it("keys its rates by the tier slugs as stored, lowercase, so that a rate given for Gold is the gold tier's", () => {
    // Act
    const segment = segmentRecord(M, { name: 'Shoes', rates: { Gold: 12.5 } }, NOW);

    // Assess
    expect(segment.rates).toEqual({ gold: 12.5 });
    expect(toSegmentDetailResponse(segment, [tierRecord(M, { slug: 'Gold', name: 'Gold' }, NOW)]).tiers).toEqual([
      { name: 'Gold', slug: 'gold', rate: 12.5, visual_rate: '12.5%' },
    ]);
  });
});

describe('affiliate and request presenters', () => {
  it('shows the tier as {name, slug}, or null', () => {
    const gold = tierRecord(M, { slug: 'gold', name: 'Gold' }, NOW);
    const alice = affiliateRecord(M, { slug: 'Alice', seq: 1, name: 'Alice', email: 'A@x.example', tier: 'gold' }, NOW);
    expect(toAffiliateResponse(alice, gold)).toEqual({
      name: 'Alice',
      slug: 'alice',
      status: 'active',
      tier: { name: 'Gold', slug: 'gold' },
      accepted_at: NOW,
      created_at: NOW,
    });
    expect(toAffiliateResponse(alice, undefined).tier).toBeNull();
  });

  it('reports an accepted request as accepted, except in the accept response (active)', () => {
    const request = affiliateRequestRecord(
      M,
      { seq: 1, status: 'accepted', affiliate: { slug: 'bob', name: 'Bob', email: 'bob@x.example' } },
      NOW,
    );
    expect(toAffiliateRequestResponse(request)).toEqual({
      uuid: request.uuid,
      affiliate: { name: 'Bob', slug: 'bob' },
      status: 'accepted',
      requested_at: NOW,
    });
    expect(toAcceptedRequestResponse(request).status).toBe('active');
  });
});

describe('affiliateOnAccept', () => {
  it('creates an affiliate when the slug is new', () => {
    expect(affiliateOnAccept(undefined)).toEqual({ kind: 'create' });
  });

  it('reactivates an inactive affiliate, handing back the item as read', () => {
    // Prepare
    const existing = affiliateRecord(
      M,
      { slug: 'bob', seq: 4, name: 'Bob', email: 'bob@x.example', status: 'inactive', tier: 'gold' },
      NOW,
    );

    // Act
    const change = affiliateOnAccept(existing);

    // Assess
    expect(change).toEqual({ kind: 'reactivate', existing });
  });

  it('leaves an already active affiliate unchanged', () => {
    // Prepare
    const existing = affiliateRecord(M, { slug: 'bob', seq: 4, name: 'Bob', email: 'bob@x.example' }, NOW);

    // Act
    const change = affiliateOnAccept(existing);

    // Assess
    expect(change).toEqual({ kind: 'unchanged' });
  });
});
