import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, merchantFixture, orderBody, seed, seedOne, TRACE_ID } from './helpers';
import { mailsTo, uniqueEmail } from './program-helpers';

let acme: SeededMerchant;
let other: SeededMerchant;
const OTHER_EMAIL = uniqueEmail('foreign');
const ALICE_ACCEPTED_AT = '2026-01-15T09:00:00.000Z';

const applicant = (slug: string) => ({ slug, name: `Applicant ${slug}`, email: uniqueEmail(slug) });

beforeAll(async () => {
  const fixture = merchantFixture({
    key: 'acme',
    affiliates: [
      { slug: 'alice', name: 'Alice', email: 'alice@example.com', tier: 'gold', status: 'active', accepted_at: ALICE_ACCEPTED_AT },
      { slug: 'ivan', name: 'Ivan', email: 'ivan@example.com', tier: 'gold', status: 'inactive' },
    ],
    affiliate_requests: [
      { key: 'older', requested_at: '2026-02-01T00:00:00Z', affiliate: applicant('older') },
      { key: 'newer', requested_at: '2026-02-03T00:00:00Z', affiliate: applicant('newer') },
      { key: 'accepted', status: 'accepted', requested_at: '2026-01-01T00:00:00Z', affiliate: applicant('acc') },
      { key: 'declined', status: 'declined', requested_at: '2026-01-02T00:00:00Z', affiliate: applicant('dec') },
    ],
  });
  const seeded = await seed([
    fixture,
    merchantFixture({ key: 'other', affiliate_requests: [{ key: 'theirs', affiliate: { slug: 'zed', name: 'Zed', email: OTHER_EMAIL } }] }),
  ]);
  acme = seeded.acme as SeededMerchant;
  other = seeded.other as SeededMerchant;
});

const live = () => api('live', acme.tokens.live);
const uuids = (res: { body: { data: { uuid: string }[] } }) => res.body.data.map((request) => request.uuid);

/** A merchant with fresh pending requests, so state-changing tests do not disturb the list tests. */
const freshMerchant = async (...slugs: string[]) => {
  const requests = slugs.map((slug) => ({ key: slug, affiliate: applicant(slug) }));
  const fixture = merchantFixture({ key: `m-${randomUUID().slice(0, 6)}`, affiliate_requests: requests });
  const merchant = await seedOne(fixture);
  return {
    merchant,
    name: fixture.name,
    client: api('live', merchant.tokens.live),
    emailOf: Object.fromEntries(requests.map((request) => [request.key, request.affiliate.email])),
  };
};

describe('GET /api/v2/affiliate-requests', () => {
  it('lists pending requests by default, newest first; data is the array, Laravel pagination', async () => {
    const res = await live().get('/api/v2/affiliate-requests');
    expect(res.status).toBe(200);
    expect(uuids(res)).toEqual([acme.affiliate_requests.newer, acme.affiliate_requests.older]);
    expect(res.body.data[0]).toEqual({
      uuid: acme.affiliate_requests.newer,
      affiliate: { name: 'Applicant newer', slug: 'newer' },
      status: 'pending',
      requested_at: '2026-02-03T00:00:00.000Z',
    });
    expect(res.body.meta).toEqual({
      pagination: { current_page: 1, last_page: 1, per_page: 15, total: 2, next_page_url: null, prev_page_url: null },
      trace_id: expect.stringMatching(TRACE_ID),
    });
  });

  it('filters by one status or several separated by commas', async () => {
    const declined = await live().get('/api/v2/affiliate-requests?status=declined');
    expect(uuids(declined)).toEqual([acme.affiliate_requests.declined]);
    const decided = await live().get('/api/v2/affiliate-requests?status=accepted,declined');
    expect(uuids(decided)).toEqual([acme.affiliate_requests.declined, acme.affiliate_requests.accepted]);
    expect(decided.body.data.map((request: { status: string }) => request.status)).toEqual(['declined', 'accepted']);
    const all = await live().get('/api/v2/affiliate-requests?status=pending,accepted,declined&per_page=3&page=2');
    expect(all.body.meta.pagination).toMatchObject({ total: 4, last_page: 2, current_page: 2, next_page_url: null });
    expect(uuids(all)).toEqual([acme.affiliate_requests.accepted]); // requested_at: newer, older, declined, accepted
  });

  it('answers 422 keyed status for any other value', async () => {
    for (const status of ['active', 'pending,bogus']) {
      const res = await live().get(`/api/v2/affiliate-requests?status=${status}`);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({ status: ['The selected status is invalid.'] });
    }
  });

  it("never lists another merchant's requests", async () => {
    const res = await live().get('/api/v2/affiliate-requests?status=pending,accepted,declined');
    expect(uuids(res)).not.toContain(other.affiliate_requests.theirs);
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get('/api/v2/affiliate-requests')).status).toBe(401);
  });
});

describe('GET /api/v2/affiliate-requests/{uuid}', () => {
  it('returns the request', async () => {
    const res = await live().get(`/api/v2/affiliate-requests/${acme.affiliate_requests.accepted}`);
    expect(res.status).toBe(200);
    expect(res.body.data.affiliate_request).toEqual({
      uuid: acme.affiliate_requests.accepted,
      affiliate: { name: 'Applicant acc', slug: 'acc' },
      status: 'accepted',
      requested_at: '2026-01-01T00:00:00.000Z',
    });
  });

  it("answers 404 for a missing request and a path that is not a UUID (another merchant's: tenant-isolation.test.ts)", async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await live().get(`/api/v2/affiliate-requests/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.errors).toEqual({ message: ['Not Found'] });
    }
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get(`/api/v2/affiliate-requests/${acme.affiliate_requests.older}`)).status).toBe(401);
  });
});

describe('POST /api/v2/affiliate-requests/{uuid}/accept', () => {
  it('accepts: 200 with status active; the affiliate is active, listed with accepted_at, attributable, and e-mailed', async () => {
    const { merchant, name, client, emailOf } = await freshMerchant('kim');
    const res = await client.post(`/api/v2/affiliate-requests/${merchant.affiliate_requests.kim}/accept`);
    expect(res.status).toBe(200);
    expect(res.body.data.affiliate_request).toEqual({
      uuid: merchant.affiliate_requests.kim,
      affiliate: { name: 'Applicant kim', slug: 'kim' },
      status: 'active',
      requested_at: expect.any(String),
    });

    expect((await client.get(`/api/v2/affiliate-requests/${merchant.affiliate_requests.kim}`)).body.data.affiliate_request.status).toBe(
      'accepted',
    );
    expect(uuids(await client.get('/api/v2/affiliate-requests?status=accepted'))).toEqual([merchant.affiliate_requests.kim]);
    const listed = (await client.get('/api/v2/affiliates')).body.data.affiliates.find(
      (affiliate: { slug: string }) => affiliate.slug === 'kim',
    );
    // a joining affiliate gets the merchant's default tier
    expect(listed).toEqual({
      name: 'Applicant kim',
      slug: 'kim',
      status: 'active',
      tier: { name: 'Gold', slug: 'gold' },
      accepted_at: expect.stringMatching(/^\d{4}-/),
      created_at: expect.any(String),
    });
    expect((await client.post('/api/v2/orders/create', orderBody({ affiliate_slug: 'kim' }))).status).toBe(201);

    const mails = await mailsTo(emailOf.kim as string);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toBe(`${name} accepted your affiliate request`);
    expect(mails[0]?.body.text).toContain('"kim"');
  });

  it('refuses a request that is not pending with 422 errors.message, and changes nothing', async () => {
    const accepted = await live().post(`/api/v2/affiliate-requests/${acme.affiliate_requests.accepted}/accept`);
    expect(accepted.status).toBe(422);
    expect(accepted.body.errors).toEqual({ message: ['The affiliate request has already been accepted.'] });
    const declined = await live().post(`/api/v2/affiliate-requests/${acme.affiliate_requests.declined}/accept`);
    expect(declined.status).toBe(422);
    expect(declined.body.errors).toEqual({ message: ['The affiliate request has already been declined.'] });
    expect((await live().get(`/api/v2/affiliate-requests/${acme.affiliate_requests.declined}`)).body.data.affiliate_request.status).toBe(
      'declined',
    );
    expect((await live().get('/api/v2/affiliates/dec')).status).toBe(404);
  });

  it('reactivates an inactive affiliate of the same slug, keeping its tier', async () => {
    const merchant = await seedOne(
      merchantFixture({
        key: 'react',
        affiliates: [{ slug: 'ivan', name: 'Ivan', email: 'ivan@example.com', tier: 'gold', status: 'inactive' }],
        affiliate_requests: [{ key: 'ivan', affiliate: { slug: 'IVAN', name: 'Ivan Again', email: uniqueEmail('ivan') } }],
      }),
    );
    const client = api('live', merchant.tokens.live);
    expect((await client.post('/api/v2/orders/create', orderBody({ affiliate_slug: 'ivan' }))).status).toBe(422);
    expect((await client.post(`/api/v2/affiliate-requests/${merchant.affiliate_requests.ivan}/accept`)).status).toBe(200);
    const ivan = await client.get('/api/v2/affiliates/ivan');
    expect(ivan.body.data.affiliate).toMatchObject({
      name: 'Ivan Again',
      status: 'active',
      tier: { name: 'Gold', slug: 'gold' },
      accepted_at: expect.stringMatching(/^\d{4}-/),
    });
    expect((await client.post('/api/v2/orders/create', orderBody({ affiliate_slug: 'ivan' }))).status).toBe(201);
  });

  it('accepts a request from an affiliate that is already active without changing the affiliate', async () => {
    const merchant = await seedOne(
      merchantFixture({
        key: 'dup',
        affiliates: [
          { slug: 'alice', name: 'Alice', email: 'alice@example.com', tier: 'gold', status: 'active', accepted_at: ALICE_ACCEPTED_AT },
        ],
        affiliate_requests: [{ key: 'alice', affiliate: { slug: 'alice', name: 'Alice Renamed', email: uniqueEmail('alice') } }],
      }),
    );
    const client = api('live', merchant.tokens.live);
    expect((await client.post(`/api/v2/affiliate-requests/${merchant.affiliate_requests.alice}/accept`)).status).toBe(200);
    expect((await client.get('/api/v2/affiliates/alice')).body.data.affiliate).toMatchObject({
      name: 'Alice',
      accepted_at: ALICE_ACCEPTED_AT,
      tier: { slug: 'gold' },
    });
  });

  it('answers 404 for a missing request and a path that is not a UUID', async () => {
    expect((await live().post(`/api/v2/affiliate-requests/${randomUUID()}/accept`)).status).toBe(404);
    expect((await live().post('/api/v2/affiliate-requests/not-a-uuid/accept')).status).toBe(404);
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').post(`/api/v2/affiliate-requests/${acme.affiliate_requests.older}/accept`)).status).toBe(401);
  });
});

describe('POST /api/v2/affiliate-requests/{uuid}/decline', () => {
  it('declines: 200 with status declined; listable with status=declined; e-mailed; no affiliate', async () => {
    const { merchant, name, client, emailOf } = await freshMerchant('lou');
    const res = await client.post(`/api/v2/affiliate-requests/${merchant.affiliate_requests.lou}/decline`);
    expect(res.status).toBe(200);
    expect(res.body.data.affiliate_request).toEqual({
      uuid: merchant.affiliate_requests.lou,
      affiliate: { name: 'Applicant lou', slug: 'lou' },
      status: 'declined',
      requested_at: expect.any(String),
    });
    expect(uuids(await client.get('/api/v2/affiliate-requests?status=declined'))).toEqual([merchant.affiliate_requests.lou]);
    expect(uuids(await client.get('/api/v2/affiliate-requests'))).toEqual([]);
    expect((await client.get('/api/v2/affiliates/lou')).status).toBe(404);
    const mails = await mailsTo(emailOf.lou as string);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toBe(`${name} declined your affiliate request`);

    const again = await client.post(`/api/v2/affiliate-requests/${merchant.affiliate_requests.lou}/decline`);
    expect(again.status).toBe(422);
    expect(again.body.errors).toEqual({ message: ['The affiliate request has already been declined.'] });
    expect((await client.post(`/api/v2/affiliate-requests/${merchant.affiliate_requests.lou}/accept`)).status).toBe(422);
    expect(await mailsTo(emailOf.lou as string)).toHaveLength(1);
  });

  it('refuses an accepted request with 422', async () => {
    const res = await live().post(`/api/v2/affiliate-requests/${acme.affiliate_requests.accepted}/decline`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ message: ['The affiliate request has already been accepted.'] });
  });

  it('answers 404 for a missing request', async () => {
    expect((await live().post(`/api/v2/affiliate-requests/${randomUUID()}/decline`)).status).toBe(404);
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').post(`/api/v2/affiliate-requests/${acme.affiliate_requests.older}/decline`)).status).toBe(401);
  });
});

describe('concurrent accept and decline', () => {
  it('lets exactly one win for each request; the state and the e-mails match the winner', async () => {
    const slugs = ['r1', 'r2', 'r3', 'r4', 'r5'];
    const { merchant, client, emailOf } = await freshMerchant(...slugs);
    for (const slug of slugs) {
      const uuid = merchant.affiliate_requests[slug] as string;
      const [accept, decline] = await Promise.all([
        client.post(`/api/v2/affiliate-requests/${uuid}/accept`),
        client.post(`/api/v2/affiliate-requests/${uuid}/decline`),
      ]);
      expect([accept.status, decline.status].sort()).toEqual([200, 422]);
      const loser = accept.status === 422 ? accept : decline;
      expect(loser.body.errors.message).toHaveLength(1);

      const stored = (await client.get(`/api/v2/affiliate-requests/${uuid}`)).body.data.affiliate_request.status;
      const affiliate = await client.get(`/api/v2/affiliates/${slug}`);
      if (accept.status === 200) {
        expect(stored).toBe('accepted');
        expect(affiliate.body.data.affiliate.status).toBe('active');
      } else {
        expect(stored).toBe('declined');
        expect(affiliate.status).toBe(404);
      }
      const mails = await mailsTo(emailOf[slug] as string);
      expect(mails).toHaveLength(1);
      expect(mails[0]?.subject).toContain(accept.status === 200 ? 'accepted' : 'declined');
    }
  });
});
