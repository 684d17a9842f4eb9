import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { api, merchantFixture, seed, TRACE_ID } from './helpers';
import { INVITE_LINK_BASE_URL, MAIL_FROM, mailsTo, uniqueEmail } from './program-helpers';

let acme: SeededMerchant;
let other: SeededMerchant;
let acmeName: string;
const SENDER = 'owner@merchant.example';
const CAROL = uniqueEmail('carol');

beforeAll(async () => {
  const fixture = merchantFixture({
    key: 'acme',
    users: [{ email: SENDER, name: 'Olivia Owner' }, { email: 'second@merchant.example' }],
    invites: [{ key: 'used', email: CAROL, link_used_at: '2026-10-01T00:00:00Z' }],
  });
  acmeName = fixture.name;
  const seeded = await seed([
    fixture,
    merchantFixture({ key: 'other', users: [{ email: 'boss@other.example' }], invites: [{ key: 'theirs', email: uniqueEmail('theirs') }] }),
  ]);
  acme = seeded.acme as SeededMerchant;
  other = seeded.other as SeededMerchant;
});

const live = () => api('live', acme.tokens.live);
const invite = (body: Record<string, unknown>) => live().post('/api/v2/affiliates/invite', body);

describe('POST /api/v2/affiliates/invite', () => {
  it('creates the invite (200, data.invite) and e-mails the invitee with the content and the link', async () => {
    const email = uniqueEmail('dave');
    const res = await invite({
      email: email.toUpperCase(),
      sender_email: 'OWNER@merchant.example',
      content: 'Hi Dave,\nwe would love to work with you.',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        invite: {
          uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
          email,
          link_used_at: null,
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      },
      errors: null,
      meta: { trace_id: expect.stringMatching(TRACE_ID) },
    });
    const [mail, ...more] = await mailsTo(email);
    expect(more).toEqual([]);
    expect(mail).toMatchObject({ from: MAIL_FROM, replyTo: [SENDER], subject: expect.stringContaining(acmeName) });
    expect(mail?.body.text).toContain('Hi Dave,\nwe would love to work with you.');
    expect(mail?.body.text).toContain(acmeName);
    expect(mail?.body.text).toContain(`${INVITE_LINK_BASE_URL}/${res.body.data.invite.uuid}`);
    expect(mail?.body.html).toContain(`href="${INVITE_LINK_BASE_URL}/${res.body.data.invite.uuid}"`);
  });

  it('answers 422 on email for an address the merchant already invited, in any casing', async () => {
    const email = uniqueEmail('erin');
    expect((await invite({ email, sender_email: SENDER })).status).toBe(200);
    for (const again of [email, email.toUpperCase(), CAROL]) {
      const res = await invite({ email: again, sender_email: SENDER });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({ email: ['The email has already been taken.'] });
    }
    expect(await mailsTo(email)).toHaveLength(1);
  });

  it('lets another merchant invite the same address', async () => {
    const email = uniqueEmail('shared');
    expect((await invite({ email, sender_email: SENDER })).status).toBe(200);
    expect(
      (await api('live', other.tokens.live).post('/api/v2/affiliates/invite', { email, sender_email: 'boss@other.example' })).status,
    ).toBe(200);
  });

  it('answers 422 on sender_email when the sender is not a user of the merchant', async () => {
    for (const sender of ['stranger@merchant.example', 'boss@other.example']) {
      const email = uniqueEmail('fred');
      const res = await invite({ email, sender_email: sender });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({ sender_email: ['The selected sender email is invalid.'] });
      expect(await mailsTo(email)).toEqual([]);
    }
  });

  it('answers 422 keyed by field for missing or malformed fields and over-long content', async () => {
    const missing = await invite({});
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual({ email: ['The email field is required.'], sender_email: ['The sender email field is required.'] });
    const malformed = await invite({ email: 'not-an-email', sender_email: SENDER, content: 'x'.repeat(5001) });
    expect(malformed.body.errors).toEqual({
      email: ['The email field must be a valid email address.'],
      content: ['The content field must not be greater than 5000 characters.'],
    });
  });

  it('gives one 200 and 422s to concurrent invites of one address, and sends one e-mail', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all(Array.from({ length: 6 }, () => invite({ email, sender_email: SENDER })));
    expect(results.filter((res) => res.status === 200)).toHaveLength(1);
    const refused = results.filter((res) => res.status === 422);
    expect(refused).toHaveLength(5);
    for (const res of refused) expect(res.body.errors).toEqual({ email: ['The email has already been taken.'] });
    expect(await mailsTo(email)).toHaveLength(1);
    const listed = await live().get(`/api/v2/affiliates/invites?email=${encodeURIComponent(email)}`);
    expect(listed.body.meta.pagination.total).toBe(1);
  });

  it('answers 401 without a token', async () => {
    const email = uniqueEmail('nobody');
    expect((await api('live').post('/api/v2/affiliates/invite', { email, sender_email: SENDER })).status).toBe(401);
    expect(await mailsTo(email)).toEqual([]);
  });
});

describe('GET /api/v2/affiliates/invites', () => {
  it("lists the merchant's invites newest first; data is the array, pagination in the invites form", async () => {
    const fresh = await seed([merchantFixture({ key: 'lister', invites: [{ key: 'old', email: uniqueEmail('old') }] })]);
    const lister = fresh.lister as SeededMerchant;
    const client = api('live', lister.tokens.live);
    const newer = uniqueEmail('newer');
    expect((await client.post('/api/v2/affiliates/invite', { email: newer, sender_email: 'owner@merchant.example' })).status).toBe(200);

    const res = await client.get('/api/v2/affiliates/invites');
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body.data)).toBe(true);
    expect(res.body.data.map((item: { email: string }) => item.email)[0]).toBe(newer);
    expect(res.body.data[1]).toEqual({
      uuid: lister.invites.old,
      email: expect.stringMatching(/^old\./),
      link_used_at: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(res.body.meta.pagination).toEqual({ total: 2, count: 2, per_page: 15, current_page: 1, total_pages: 1 });

    const page2 = await client.get('/api/v2/affiliates/invites?per_page=1&page=2');
    expect(page2.body.data.map((item: { uuid: string }) => item.uuid)).toEqual([lister.invites.old]);
    expect(page2.body.meta.pagination).toEqual({ total: 2, count: 1, per_page: 1, current_page: 2, total_pages: 2 });
  });

  it('filters by a partial, case-insensitive e-mail match and shows link_used_at', async () => {
    const res = await live().get(`/api/v2/affiliates/invites?email=${encodeURIComponent(CAROL.slice(0, 10).toUpperCase())}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        uuid: acme.invites.used,
        email: CAROL,
        link_used_at: '2026-10-01T00:00:00.000Z',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    expect(res.body.meta.pagination).toMatchObject({ total: 1, count: 1 });
  });

  it("never lists another merchant's invites", async () => {
    const res = await live().get('/api/v2/affiliates/invites?per_page=100');
    expect(res.body.data.map((item: { uuid: string }) => item.uuid)).not.toContain(other.invites.theirs);
    expect(res.body.data.map((item: { uuid: string }) => item.uuid)).toContain(acme.invites.used);
  });

  it('answers 401 without a token', async () => {
    expect((await api('live').get('/api/v2/affiliates/invites')).status).toBe(401);
  });
});
