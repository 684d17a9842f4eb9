import { describe, expect, it } from 'vitest';
import { idAfterPrefix, indexKeys, keys, merchantIdOf, padSeq, SK } from '../../shared/db/keys';

const MERCHANT_ID = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b';

describe('table keys', () => {
  it('put every merchant item under the M#<merchantId> partition', () => {
    // Act
    const built = [
      keys.merchant(MERCHANT_ID),
      keys.user(MERCHANT_ID, 'Owner@Acme.example'),
      keys.token(MERCHANT_ID, 'abc'),
      keys.tier(MERCHANT_ID, 'gold'),
      keys.segment(MERCHANT_ID, 'seg'),
      keys.affiliate(MERCHANT_ID, 'alice'),
      keys.affiliateRequest(MERCHANT_ID, 'req'),
      keys.invite(MERCHANT_ID, 'inv'),
      keys.inviteEmail(MERCHANT_ID, 'carol@example.com'),
      keys.order(MERCHANT_ID, 'ord'),
      keys.orderNo(MERCHANT_ID, 'A-1'),
      keys.customer(MERCHANT_ID, 'dan@example.com'),
      keys.commission(MERCHANT_ID, 'ord'),
    ];

    // Assess
    for (const key of built) expect(key.pk).toBe(`M#${MERCHANT_ID}`);
    expect(keys.merchantPartition(MERCHANT_ID)).toBe(`M#${MERCHANT_ID}`);
    expect(indexKeys.orderSequence(MERCHANT_ID, 1).gsi1pk.startsWith(`M#${MERCHANT_ID}#`)).toBe(true);
  });

  it('give the order items their own sort-key prefixes', () => {
    expect(keys.order(MERCHANT_ID, 'u-1')).toEqual({ pk: `M#${MERCHANT_ID}`, sk: 'ORDER#u-1' });
    expect(keys.orderNo(MERCHANT_ID, 'A-1')).toEqual({ pk: `M#${MERCHANT_ID}`, sk: 'ORDER_NO#A-1' });
    expect(keys.merchant(MERCHANT_ID)).toEqual({ pk: `M#${MERCHANT_ID}`, sk: 'MERCHANT' });
  });

  it('lower-case the parts that are case-insensitive (slugs, e-mails) and keep order_no as sent', () => {
    expect(keys.affiliate(MERCHANT_ID, 'ALICE').sk).toBe('AFFILIATE#alice');
    expect(keys.customer(MERCHANT_ID, 'Dan@Example.COM').sk).toBe('CUSTOMER#dan@example.com');
    expect(keys.inviteEmail(MERCHANT_ID, 'Carol@Example.com').sk).toBe('INVITE_EMAIL#carol@example.com');
    expect(keys.orderNo(MERCHANT_ID, 'Ab-1').sk).toBe('ORDER_NO#Ab-1');
  });

  it('keep two merchants apart even when one id is a prefix of the other', () => {
    expect(keys.order('m1', 'u').pk).not.toBe(keys.order('m10', 'u').pk);
    expect(indexKeys.orderSequencePartition('m1')).not.toBe(indexKeys.orderSequencePartition('m10'));
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
    expect(indexKeys.tokenLookup('ab12')).toEqual({ gsi1pk: 'TOKEN#ab12', gsi1sk: 'TOKEN' });
  });

  it('place an order in its merchant sequence on gsi1', () => {
    expect(indexKeys.orderSequence(MERCHANT_ID, 7)).toEqual({ gsi1pk: `M#${MERCHANT_ID}#ORDERS`, gsi1sk: '000000000007' });
    expect(indexKeys.orderSequencePartition(MERCHANT_ID)).toBe(`M#${MERCHANT_ID}#ORDERS`);
  });

  it('mark a pending outbox entry on gsi2 by its acceptance time', () => {
    expect(indexKeys.outboxPending('2026-03-01T10:00:00.000Z')).toEqual({ gsi2pk: 'OUTBOX', gsi2sk: '2026-03-01T10:00:00.000Z' });
    expect(indexKeys.outboxPartition).toBe('OUTBOX');
  });
});

describe('reading keys back', () => {
  it('merchantIdOf returns the id of a merchant partition key', () => {
    expect(merchantIdOf(`M#${MERCHANT_ID}`)).toBe(MERCHANT_ID);
  });

  it('merchantIdOf refuses a key that is not a merchant partition', () => {
    expect(() => merchantIdOf('OUTBOX')).toThrow(/Not a merchant partition key/);
  });

  it('idAfterPrefix strips the sort-key prefix', () => {
    expect(idAfterPrefix('ORDER#u-1', SK.order)).toBe('u-1');
  });
});
