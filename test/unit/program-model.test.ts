import { describe, expect, it } from 'vitest';
import {
  affiliateItem,
  affiliateOnAccept,
  formatVisualRate,
  segmentItem,
  tierItem,
  toAcceptedRequestResponse,
  toAffiliateRequestResponse,
  toAffiliateResponse,
  toSegmentDetailResponse,
  toSegmentResponse,
  affiliateRequestItem,
} from '../../shared/domain/program-model';

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
  const gold = tierItem(M, { slug: 'gold', name: 'Gold' }, NOW);
  const bronze = tierItem(M, { slug: 'bronze', name: 'Bronze' }, NOW);
  const silver = tierItem(M, { slug: 'silver', name: 'Silver' }, NOW);
  const segment = segmentItem(M, { name: 'Shoes', slugs: ['shoes'], skus: ['SKU-1'], rates: { gold: 12.5, silver: 9, gone: 3 } }, NOW);

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

describe('affiliate and request presenters', () => {
  it('shows the tier as {name, slug}, or null', () => {
    const gold = tierItem(M, { slug: 'gold', name: 'Gold' }, NOW);
    const alice = affiliateItem(M, { slug: 'Alice', name: 'Alice', email: 'A@x.example', tier: 'gold' }, NOW);
    expect(toAffiliateResponse(alice, gold)).toEqual({ name: 'Alice', slug: 'alice', status: 'active', tier: { name: 'Gold', slug: 'gold' }, accepted_at: NOW, created_at: NOW });
    expect(toAffiliateResponse(alice, undefined).tier).toBeNull();
  });

  it('reports an accepted request as accepted, except in the accept response (active)', () => {
    const request = affiliateRequestItem(M, { status: 'accepted', affiliate: { slug: 'bob', name: 'Bob', email: 'bob@x.example' } }, NOW);
    expect(toAffiliateRequestResponse(request)).toEqual({ uuid: request.uuid, affiliate: { name: 'Bob', slug: 'bob' }, status: 'accepted', requested_at: NOW });
    expect(toAcceptedRequestResponse(request).status).toBe('active');
  });
});

describe('affiliateOnAccept', () => {
  const request = { affiliate: { slug: 'bob', name: 'Bob New', email: 'bob.new@x.example' } };
  const LATER = '2026-04-01T00:00:00.000Z';

  it('creates an active affiliate accepted now when the slug is new', () => {
    const change = affiliateOnAccept(M, request, undefined, LATER);
    expect(change.kind).toBe('create');
    if (change.kind !== 'create') return;
    expect(change.item).toMatchObject({ slug: 'bob', status: 'active', accepted_at: LATER, created_at: LATER, tier_slug: null });
  });

  it('reactivates an inactive affiliate, keeping its tier and created_at', () => {
    const existing = affiliateItem(M, { slug: 'bob', name: 'Bob', email: 'bob@x.example', status: 'inactive', tier: 'gold' }, NOW);
    const change = affiliateOnAccept(M, request, existing, LATER);
    expect(change.kind).toBe('reactivate');
    if (change.kind !== 'reactivate') return;
    expect(change.seenUpdatedAt).toBe(NOW);
    expect(change.item).toMatchObject({ name: 'Bob New', email: 'bob.new@x.example', status: 'active', tier_slug: 'gold', accepted_at: LATER, created_at: NOW, updated_at: LATER });
  });

  it('leaves an already active affiliate unchanged', () => {
    const existing = affiliateItem(M, { slug: 'bob', name: 'Bob', email: 'bob@x.example' }, NOW);
    expect(affiliateOnAccept(M, request, existing, LATER)).toEqual({ kind: 'unchanged' });
  });
});
