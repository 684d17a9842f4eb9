import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SeededMerchant } from '#shared/admin/seed';
import { inviteKey } from '#shared/db/entities/invite';
import { owedNotificationUpdate } from '#shared/db/entities/notification';
import { api, eventually, merchantFixture, orderBody, seedOne, storeFor } from './helpers';
import { mailsTo, runAdmin, uniqueEmail } from './program-helpers';

/** `npm run admin`, run as a separate process against the test stack, as an operator would. */
let merchant: SeededMerchant;

beforeAll(async () => {
  merchant = await seedOne(merchantFixture({ key: 'admin' }));
});

const expectRefused = (result: Awaited<ReturnType<typeof runAdmin>>, reason: RegExp) => {
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(reason);
};

describe('mint-token and revoke-token', () => {
  it('mints a working token, printed once as JSON; once revoked it gets 401', async () => {
    const minted = await runAdmin('mint-token', '--merchant', merchant.id);
    expect(minted.code).toBe(0);
    expect(minted.json).toEqual({
      stage: 'live',
      merchant_id: merchant.id,
      token: expect.stringMatching(/^live_[A-Za-z0-9_-]{32,}$/),
      kind: 'live',
      can_place_live_orders: true,
    });
    const client = api('live', minted.json.token);
    expect((await client.get('/api/v2/tiers')).status).toBe(200);

    const revoked = await runAdmin('revoke-token', '--token', minted.json.token);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toEqual({
      stage: 'live',
      merchant_id: merchant.id,
      revoked_at: expect.any(String),
      already_revoked: false,
      refused_everywhere_by: new Date(Date.parse(revoked.json.revoked_at) + 30_000).toISOString(),
      note: 'Warm functions may still accept this token for up to 30 s after revoked_at (AUTH_CACHE_TTL_SECONDS, their token cache).',
    });
    expect((await client.get('/api/v2/tiers')).status).toBe(401);

    const again = await runAdmin('revoke-token', '--token', minted.json.token);
    expect(again.json).toMatchObject({ revoked_at: revoked.json.revoked_at, already_revoked: true });
  });

  it('mints a live token without permission to place live orders', async () => {
    const minted = await runAdmin('mint-token', '--merchant', merchant.id, '--no-live-orders');
    expect(minted.json).toMatchObject({ kind: 'live', can_place_live_orders: false });
    const legacy = await api('live', minted.json.token).post('/api/orders/create', orderBody());
    expect(legacy.status).toBe(403);
  });

  it('refuses an unknown merchant, an unknown token and a missing option with one line on stderr', async () => {
    expectRefused(await runAdmin('mint-token', '--merchant', 'no-such-merchant'), /merchant no-such-merchant does not exist/);
    expectRefused(await runAdmin('revoke-token', '--token', 'live_unknownunknownunknownunknownunknown00'), /token not found/);
    expectRefused(await runAdmin('mint-token'), /--merchant is required/);
    expectRefused(await runAdmin('frobnicate'), /unknown command frobnicate/);
  });
});

describe('apply', () => {
  it('creates a pending affiliate request that the API lists; a second application is refused', async () => {
    const email = uniqueEmail('pat');
    const applied = await runAdmin('apply', '--merchant', merchant.id, '--slug', 'Pat', '--name', 'Pat Applicant', '--email', email);
    expect(applied.code).toBe(0);
    expect(applied.json.affiliate_request).toEqual({
      uuid: expect.any(String),
      affiliate: { name: 'Pat Applicant', slug: 'pat' },
      status: 'pending',
      requested_at: expect.any(String),
    });
    const listed = await api('live', merchant.tokens.live).get('/api/v2/affiliate-requests');
    expect(listed.body.data).toContainEqual(applied.json.affiliate_request);

    expectRefused(
      await runAdmin('apply', '--merchant', merchant.id, '--slug', 'pat', '--name', 'Pat', '--email', email),
      /already has a pending request/,
    );
    expectRefused(
      await runAdmin('apply', '--merchant', merchant.id, '--slug', 'alice', '--name', 'A', '--email', uniqueEmail()),
      /already an active affiliate/,
    );
    expectRefused(await runAdmin('apply', '--merchant', merchant.id, '--slug', 'x', '--name', 'X', '--email', 'not-an-email'), /email/);
  });
});

describe('mark-invite-used', () => {
  it('sets link_used_at on the invite, once', async () => {
    const client = api('live', merchant.tokens.live);
    const email = uniqueEmail('ina');
    const created = await client.post('/api/v2/affiliates/invite', { email, sender_email: 'owner@merchant.example' });
    const uuid = created.body.data.invite.uuid;
    expect(created.body.data.invite.link_used_at).toBeNull();

    const marked = await runAdmin('mark-invite-used', '--merchant', merchant.id, '--invite', uuid);
    expect(marked.code).toBe(0);
    expect(marked.json).toMatchObject({ invite: { uuid, link_used_at: expect.any(String) }, already_used: false });
    const listed = await client.get(`/api/v2/affiliates/invites?email=${encodeURIComponent(email)}`);
    expect(listed.body.data[0].link_used_at).toBe(marked.json.invite.link_used_at);

    const again = await runAdmin('mark-invite-used', '--merchant', merchant.id, '--invite', uuid);
    expect(again.json).toMatchObject({ invite: { link_used_at: marked.json.invite.link_used_at }, already_used: true });
    expectRefused(
      await runAdmin('mark-invite-used', '--merchant', merchant.id, '--invite', '00000000-0000-4000-8000-000000000000'),
      /not found/,
    );
  });
});

describe('link-payment', () => {
  it('links an order to a payment, after which it cannot be cancelled', async () => {
    const client = api('live', merchant.tokens.live);
    const created = await client.post('/api/v2/orders/create', orderBody());
    const uuid = created.body.data.order.uuid;
    const linked = await runAdmin('link-payment', '--merchant', merchant.id, '--order', uuid, '--payment', 'pay_42');
    expect(linked.code).toBe(0);
    expect(linked.json).toEqual({
      stage: 'live',
      merchant_id: merchant.id,
      order: { uuid, order_no: created.body.data.order.order_no, payment_id: 'pay_42' },
    });

    const cancel = await client.post(`/api/v2/orders/${uuid}/cancel`);
    expect(cancel.status).toBe(422);
    expect(cancel.body.errors).toEqual({ message: ['The order is linked to a payment and cannot be cancelled.'] });
    expectRefused(
      await runAdmin('link-payment', '--merchant', merchant.id, '--order', uuid, '--payment', 'pay_other'),
      /already linked to another payment/,
    );
    expectRefused(
      await runAdmin('link-payment', '--merchant', merchant.id, '--order', '00000000-0000-4000-8000-000000000000', '--payment', 'p'),
      /not found/,
    );
  });
});

describe('resend-notifications', () => {
  it('re-sends an e-mail still owed (as after an SES failure) and settles it', async () => {
    const client = api('live', merchant.tokens.live);
    const email = uniqueEmail('owed');
    const created = await client.post('/api/v2/affiliates/invite', { email, sender_email: 'owner@merchant.example' });
    expect(await mailsTo(email)).toHaveLength(1);
    // What a failed send leaves behind: the invite still owes its e-mail (marker and NOTIFY entry).
    const store = storeFor('live');
    const key = inviteKey(merchant.id, created.body.data.invite.uuid);
    const owed = owedNotificationUpdate(key, new Date(Date.now() - 120_000).toISOString());
    await store.ddb.send(
      new UpdateCommand({
        TableName: store.table,
        Key: key,
        UpdateExpression: `SET ${owed.set}`,
        ExpressionAttributeValues: owed.values,
      }),
    );

    const resent = await runAdmin('resend-notifications', '--merchant', merchant.id);
    expect(resent.code).toBe(0);
    // The stack's follow-up of that write works on the same owed e-mail: one of the two sends it, once.
    expect(resent.json).toMatchObject({ stage: 'live', merchant_id: merchant.id, failed: 0 });
    const mails = await eventually(async () => ((await mailsTo(email)).length >= 2 ? mailsTo(email) : undefined), 10_000);
    expect(mails).toHaveLength(2);
    expect(mails[1]?.body.text).toContain(created.body.data.invite.uuid);

    expect((await runAdmin('resend-notifications', '--merchant', merchant.id)).json).toMatchObject({ sent: 0, failed: 0 });
  });
});
