/**
 * The one place that builds table keys. Every item of a merchant lives under a partition key that
 * begins with `M#<merchantId>`, so no query can reach another merchant's data by accident.
 * No other module writes a key string by hand.
 */

export type Key = { pk: string; sk: string };

const merchantPk = (merchantId: string): string => `M#${merchantId}`;

/** Sort-key prefixes of the item types that are listed with begins_with. */
export const SK = {
  merchant: 'MERCHANT',
  user: 'USER#',
  token: 'TOKEN#',
  tier: 'TIER#',
  segment: 'SEGMENT#',
  affiliate: 'AFFILIATE#',
  affiliateRequest: 'AREQ#',
  invite: 'INVITE#',
  inviteEmail: 'INVITE_EMAIL#',
  order: 'ORDER#',
  orderNo: 'ORDER_NO#',
  customer: 'CUSTOMER#',
  commission: 'COMMISSION#',
  idempotency: 'IDEMPOTENCY#',
} as const;

const item = (merchantId: string, sk: string): Key => ({ pk: merchantPk(merchantId), sk });

/** Order sequence numbers are zero-padded so their string order is their numeric order. */
const SEQ_WIDTH = 12;
export const padSeq = (seq: number): string => String(seq).padStart(SEQ_WIDTH, '0');

export const keys = {
  merchant: (merchantId: string) => item(merchantId, SK.merchant),
  user: (merchantId: string, email: string) => item(merchantId, `${SK.user}${email.toLowerCase()}`),
  token: (merchantId: string, tokenHash: string) => item(merchantId, `${SK.token}${tokenHash}`),
  tier: (merchantId: string, slug: string) => item(merchantId, `${SK.tier}${slug}`),
  segment: (merchantId: string, uuid: string) => item(merchantId, `${SK.segment}${uuid}`),
  affiliate: (merchantId: string, slug: string) => item(merchantId, `${SK.affiliate}${slug.toLowerCase()}`),
  affiliateRequest: (merchantId: string, uuid: string) => item(merchantId, `${SK.affiliateRequest}${uuid}`),
  invite: (merchantId: string, uuid: string) => item(merchantId, `${SK.invite}${uuid}`),
  /** Guard item: one invitation per e-mail address and merchant. */
  inviteEmail: (merchantId: string, email: string) => item(merchantId, `${SK.inviteEmail}${email.toLowerCase()}`),
  order: (merchantId: string, uuid: string) => item(merchantId, `${SK.order}${uuid}`),
  /** Guard item: order_no is unique per merchant. */
  orderNo: (merchantId: string, orderNo: string) => item(merchantId, `${SK.orderNo}${orderNo}`),
  customer: (merchantId: string, email: string) => item(merchantId, `${SK.customer}${email.toLowerCase()}`),
  /** Idempotency record of the commission processor: one per order. */
  commission: (merchantId: string, orderUuid: string) => item(merchantId, `${SK.commission}${orderUuid}`),
  /** Stored response of a request sent with an `Idempotency-Key` header (shared/db/idempotency.ts). */
  idempotency: (merchantId: string, key: string) => item(merchantId, `${SK.idempotency}${key}`),
  /** Partition of one merchant's items, for begins_with queries over a prefix in SK. */
  merchantPartition: (merchantId: string) => merchantPk(merchantId),
} as const;

/** Secondary-index attributes, built here for the same reason. */
export const indexKeys = {
  tokenLookup: (tokenHash: string) => ({ gsi1pk: `TOKEN#${tokenHash}`, gsi1sk: 'TOKEN' }),
  orderSequence: (merchantId: string, seq: number) => ({ gsi1pk: `${merchantPk(merchantId)}#ORDERS`, gsi1sk: padSeq(seq) }),
  orderSequencePartition: (merchantId: string) => `${merchantPk(merchantId)}#ORDERS`,
  /** Sparse outbox entry: present while an accepted order is not yet confirmed on the queue. */
  outboxPending: (acceptedAt: string) => ({ gsi2pk: 'OUTBOX', gsi2sk: acceptedAt }),
  outboxPartition: 'OUTBOX',
  /** Sparse entry on an invite or affiliate request while it owes an e-mail (see mail/relay.ts). */
  notificationPending: (since: string) => ({ gsi2pk: 'NOTIFY', gsi2sk: since }),
  notificationPartition: 'NOTIFY',
} as const;

export const merchantIdOf = (pk: string): string => {
  if (!pk.startsWith('M#')) throw new Error(`Not a merchant partition key: ${pk}`);
  return pk.slice(2);
};

export const idAfterPrefix = (sk: string, prefix: string): string => sk.slice(prefix.length);
