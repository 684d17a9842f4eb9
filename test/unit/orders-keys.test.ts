import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { affiliateKey, affiliateRecord } from '#shared/db/entities/affiliate';
import { affiliateRequestKey, affiliateRequestRecord } from '#shared/db/entities/affiliate-request';
import { merchantIdOf, merchantPk, padSeq } from '#shared/db/entities/base';
import { commissionKey } from '#shared/db/entities/commission';
import { customerKey } from '#shared/db/entities/customer';
import { inviteKey, inviteRecord } from '#shared/db/entities/invite';
import { inviteEmailKey } from '#shared/db/entities/invite-email';
import { listPartition, primaryListEntry, secondaryListEntry } from '#shared/db/entities/list-entry';
import { merchantKey } from '#shared/db/entities/merchant';
import { orderKey } from '#shared/db/entities/order';
import { orderNoKey } from '#shared/db/entities/order-no';
import { workEntry } from '#shared/db/entities/owed-work';
import { segmentKey } from '#shared/db/entities/segment';
import { tierKey } from '#shared/db/entities/tier';
import { tokenKey, tokenRecord } from '#shared/db/entities/token';
import { userKey } from '#shared/db/entities/user';

const MERCHANT_ID = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';
const NOW = '2026-03-01T10:00:00.000Z';

describe('table keys', () => {
  it('put every merchant item under the M#<merchantId> partition', () => {
    // Act
    const built = [
      merchantKey(MERCHANT_ID),
      userKey(MERCHANT_ID, 'Owner@Acme.example'),
      tokenKey(MERCHANT_ID, 'abc'),
      tierKey(MERCHANT_ID, 'gold'),
      segmentKey(MERCHANT_ID, 'seg'),
      affiliateKey(MERCHANT_ID, 'alice'),
      affiliateRequestKey(MERCHANT_ID, 'req'),
      inviteKey(MERCHANT_ID, 'inv'),
      inviteEmailKey(MERCHANT_ID, 'carol@example.com'),
      orderKey(MERCHANT_ID, 'ord'),
      orderNoKey(MERCHANT_ID, 'A-1'),
      customerKey(MERCHANT_ID, 'dan@example.com'),
      commissionKey(MERCHANT_ID, 'ord'),
    ];

    // Assess
    for (const key of built) expect(key.pk).toBe(`M#${MERCHANT_ID}`);
    expect(merchantPk(MERCHANT_ID)).toBe(`M#${MERCHANT_ID}`);
    expect(listPartition(MERCHANT_ID, 'orders', 'all').startsWith(`M#${MERCHANT_ID}#`)).toBe(true);
  });

  it('give the order items their own sort-key prefixes', () => {
    expect(orderKey(MERCHANT_ID, 'u-1')).toEqual({ pk: `M#${MERCHANT_ID}`, sk: 'ORDER#u-1' });
    expect(orderNoKey(MERCHANT_ID, 'A-1')).toEqual({ pk: `M#${MERCHANT_ID}`, sk: 'ORDER_NO#A-1' });
    expect(merchantKey(MERCHANT_ID)).toEqual({ pk: `M#${MERCHANT_ID}`, sk: 'MERCHANT' });
  });

  it('lower-case the parts that are case-insensitive (slugs, e-mails) and keep order_no as sent', () => {
    expect(affiliateKey(MERCHANT_ID, 'ALICE').sk).toBe('AFFILIATE#alice');
    expect(tierKey(MERCHANT_ID, 'Gold').sk).toBe('TIER#gold');
    expect(customerKey(MERCHANT_ID, 'Dan@Example.COM').sk).toBe('CUSTOMER#dan@example.com');
    expect(inviteEmailKey(MERCHANT_ID, 'Carol@Example.com').sk).toBe('INVITE_EMAIL#carol@example.com');
    expect(userKey(MERCHANT_ID, 'Owner@Acme.example').sk).toBe('USER#owner@acme.example');
    expect(orderNoKey(MERCHANT_ID, 'Ab-1').sk).toBe('ORDER_NO#Ab-1');
  });

  it('keep two merchants apart even when one id is a prefix of the other', () => {
    expect(orderKey('m1', 'u').pk).not.toBe(orderKey('m10', 'u').pk);
    expect(listPartition('m1', 'orders', 'all')).not.toBe(listPartition('m10', 'orders', 'all'));
    expect(listPartition('m10', 'orders', 'all').startsWith(`${merchantPk('m1')}#`)).toBe(false);
  });
});

describe('padSeq', () => {
  it('zero-pads to 12 digits', () => {
    expect(padSeq(1)).toBe('000000000001');
    expect(padSeq(42)).toBe('000000000042');
    expect(padSeq(999_999_999_999)).toBe('999999999999');
  });

  it('makes string order equal numeric order', () => {
    // Prepare
    const seqs = [1, 2, 9, 10, 11, 99, 100, 101, 1_000, 12_345, 100_000];

    // Act
    const sorted = seqs.map(padSeq).sort();

    // Assess
    expect(sorted).toEqual(seqs.map(padSeq));
  });
});

describe('index keys', () => {
  it('look a token up by its hash on gsi1', () => {
    // Prepare
    const hash = createHash('sha256').update('live_x').digest('hex');

    // Act
    const { item } = tokenRecord(MERCHANT_ID, { kind: 'live', value: 'live_x' });

    // Assess
    expect(item).toMatchObject({ pk: `M#${MERCHANT_ID}`, sk: `TOKEN#${hash}`, gsi1pk: `TOKEN#${hash}`, gsi1sk: 'TOKEN' });
    expect(tokenKey(MERCHANT_ID, hash)).toEqual({ pk: `M#${MERCHANT_ID}`, sk: `TOKEN#${hash}` });
  });

  it('place an item of a list in its merchant list partition on gsi1, at its padded sequence number', () => {
    expect(primaryListEntry(MERCHANT_ID, 'orders', 'all', 7)).toEqual({ gsi1pk: `M#${MERCHANT_ID}#orders#all`, gsi1sk: '000000000007' });
    expect(listPartition(MERCHANT_ID, 'affiliate_requests', 'pending')).toBe(`M#${MERCHANT_ID}#affiliate_requests#pending`);
    expect(secondaryListEntry(MERCHANT_ID, 'affiliates', 'tier:gold', 3)).toEqual({
      gsi3pk: `M#${MERCHANT_ID}#affiliates#tier%3Agold`,
      gsi3sk: '000000000003',
    });
  });

  it('encode bucket names from data (tier slugs), so one bucket can never reach into another', () => {
    expect(listPartition(MERCHANT_ID, 'affiliates', 'tier:a#b')).toBe(`M#${MERCHANT_ID}#affiliates#tier%3Aa%23b`);
  });

  it('list an affiliate in `all` on gsi1 and under its tier on gsi3; one without a tier only in `all`', () => {
    // Act
    const gold = affiliateRecord(MERCHANT_ID, { slug: 'Alice', seq: 5, name: 'Alice', email: 'a@x.example', tier: 'Gold' }, NOW);
    const none = affiliateRecord(MERCHANT_ID, { slug: 'bob', seq: 6, name: 'Bob', email: 'b@x.example', tier: null }, NOW);

    // Assess
    expect(gold).toMatchObject({
      gsi1pk: `M#${MERCHANT_ID}#affiliates#all`,
      gsi1sk: '000000000005',
      gsi3pk: `M#${MERCHANT_ID}#affiliates#tier%3Agold`,
      gsi3sk: '000000000005',
    });
    expect(none).toMatchObject({ gsi1pk: `M#${MERCHANT_ID}#affiliates#all`, gsi1sk: '000000000006' });
    expect(none).not.toHaveProperty('gsi3pk');
  });

  it('list a request under its status and an invite in `all`', () => {
    // Act
    const request = affiliateRequestRecord(
      MERCHANT_ID,
      { seq: 9, status: 'declined', affiliate: { slug: 'bob', name: 'Bob', email: 'b@x.example' } },
      NOW,
    );
    const invite = inviteRecord(MERCHANT_ID, { seq: 4, email: 'c@x.example' }, NOW);

    // Assess
    expect(request).toMatchObject({ gsi1pk: `M#${MERCHANT_ID}#affiliate_requests#declined`, gsi1sk: '000000000009' });
    expect(invite).toMatchObject({ gsi1pk: `M#${MERCHANT_ID}#invites#all`, gsi1sk: '000000000004' });
  });

  it("put owed work on gsi2 in the item's own merchant's partition of its kind, by its due time (no key shared by merchants)", () => {
    expect(workEntry({ pk: `M#${MERCHANT_ID}`, sk: 'INVITE#x' }, 'NOTIFY', '2026-03-01T10:00:00.000Z')).toEqual({
      gsi2pk: `M#${MERCHANT_ID}#NOTIFY`,
      gsi2sk: '2026-03-01T10:00:00.000Z',
    });
    expect(workEntry({ pk: `M#${MERCHANT_ID}#COUNTS`, sk: 'orders#all#00000000' }, 'RECOUNT', '2026-03-01T10:00:00.000Z')).toEqual({
      gsi2pk: `M#${MERCHANT_ID}#RECOUNT`,
      gsi2sk: '2026-03-01T10:00:00.000Z',
    });
  });
});

describe('reading keys back', () => {
  it('merchantIdOf returns the id of a merchant partition key', () => {
    expect(merchantIdOf(`M#${MERCHANT_ID}`)).toBe(MERCHANT_ID);
  });

  it('merchantIdOf refuses a key that is not a merchant partition', () => {
    expect(() => merchantIdOf('TOKEN#0f1e2d3c')).toThrow(/Not a merchant partition key/);
  });
});
