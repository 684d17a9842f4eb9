import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { type Stage, tokenKindOfStage } from '../config';
import { keys, indexKeys } from '../db/keys';
import { generateToken, hashToken } from '../db/tokens';
import { buildOrderItem, orderTransactItems } from '../domain/order-model';
import {
  affiliateItem,
  affiliateRequestItem,
  inviteEmailGuard,
  inviteItem,
  segmentItem,
  tierItem,
  userItem,
} from '../domain/program-model';
import { isoNow, toIso } from '../time';
import type { Fixture } from './fixture';
import { putAll, type Store } from './store';

export type SeededMerchant = {
  id: string;
  tokens: Record<string, string>;
  segments: Record<string, string>;
  affiliate_requests: Record<string, string>;
  invites: Record<string, string>;
  orders: Record<string, string>;
};

export type SeedResult = { stage: Stage; merchants: Record<string, SeededMerchant> };

type FixtureMerchant = Fixture['merchants'][number];

/** Writes a token item; returns the token string (the only time it exists in clear). */
export const tokenItem = (
  merchantId: string,
  token: { kind: 'live' | 'testing'; can_place_live_orders?: boolean; value?: string; label?: string },
) => {
  const value = token.value ?? generateToken(token.kind);
  const hash = hashToken(value);
  return {
    value,
    item: {
      ...keys.token(merchantId, hash),
      ...indexKeys.tokenLookup(hash),
      type: 'token',
      merchant_id: merchantId,
      kind: token.kind,
      can_place_live_orders: token.can_place_live_orders ?? true,
      label: token.label,
      created_at: isoNow(),
    },
  };
};

const seedMerchant = async (store: Store, stage: Stage, merchant: FixtureMerchant): Promise<SeededMerchant> => {
  const id = merchant.id ?? randomUUID();
  const result: SeededMerchant = { id, tokens: {}, segments: {}, affiliate_requests: {}, invites: {}, orders: {} };

  // The merchant first, guarded: seeding the same fixed id twice must not reset its order counter.
  try {
    await store.ddb.send(
      new PutCommand({
        TableName: store.table,
        Item: { ...keys.merchant(id), type: 'merchant', id, name: merchant.name, currency: merchant.currency.toUpperCase(), orders_count: 0, created_at: isoNow() },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') throw new Error(`merchant ${merchant.key}: id ${id} already exists in the ${stage} table`);
    throw error;
  }

  const items: Record<string, unknown>[] = [];
  for (const user of merchant.users ?? []) items.push(userItem(id, user));
  for (const token of merchant.tokens ?? []) {
    const { value, item } = tokenItem(id, { ...token, kind: token.kind ?? tokenKindOfStage(stage), label: token.key });
    result.tokens[token.key] = value;
    items.push(item);
  }
  for (const tier of merchant.tiers ?? []) items.push(tierItem(id, tier));
  const segments = merchant.segments ?? [];
  if (!segments.some((segment) => segment.default)) segments.unshift({ key: 'default', name: 'Default', description: 'Rows without a matching segment slug', default: true });
  for (const segment of segments) {
    const item = segmentItem(id, segment);
    result.segments[segment.key] = item.uuid;
    items.push(item);
  }
  for (const affiliate of merchant.affiliates ?? []) {
    items.push(affiliateItem(id, { ...affiliate, accepted_at: affiliate.accepted_at ? toIso(affiliate.accepted_at) : undefined }));
  }
  for (const request of merchant.affiliate_requests ?? []) {
    const item = affiliateRequestItem(id, { ...request, requested_at: request.requested_at ? toIso(request.requested_at) : undefined });
    result.affiliate_requests[request.key] = item.uuid;
    items.push(item);
  }
  for (const invite of merchant.invites ?? []) {
    const item = inviteItem(id, { ...invite, link_used_at: invite.link_used_at ? toIso(invite.link_used_at) : null });
    result.invites[invite.key] = item.uuid;
    items.push(item, inviteEmailGuard(id, invite.email, item.uuid));
  }
  await putAll(store, items);

  // Orders oldest first, so the per-merchant sequence follows creation time. Through the same
  // transaction items as the API (order_no guard, counter, customer); not queued: this is history.
  const orders = [...(merchant.orders ?? [])].sort((a, b) => (a.created_at ?? '').localeCompare(b.created_at ?? ''));
  for (const [index, order] of orders.entries()) {
    const item = buildOrderItem(order, {
      uuid: order.uuid,
      seq: index + 1,
      created_at: order.created_at ? toIso(order.created_at) : undefined,
      cancelled_at: order.cancelled_at ? toIso(order.cancelled_at) : undefined,
      payment_id: order.payment_id,
    });
    try {
      await store.ddb.send(new TransactWriteCommand({ TransactItems: orderTransactItems(store.table, id, item, index, { pending: false, checkAffiliate: false }) }));
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code);
      const why = codes[0] === 'ConditionalCheckFailed' ? `affiliate ${order.affiliate_slug} is not in the fixture` : codes[1] === 'ConditionalCheckFailed' ? `order_no ${order.order_no} is used twice` : codes.join(',');
      throw new Error(`merchant ${merchant.key}, order ${order.key}: ${why}`);
    }
    result.orders[order.key] = item.uuid;
  }
  return result;
};

/** Loads a fixture into one stage's table and returns the ids and tokens it created. */
export const seedFixture = async (store: Store, stage: Stage, fixture: Fixture): Promise<SeedResult> => {
  const merchants: Record<string, SeededMerchant> = {};
  for (const merchant of fixture.merchants) merchants[merchant.key] = await seedMerchant(store, stage, merchant);
  return { stage, merchants };
};
