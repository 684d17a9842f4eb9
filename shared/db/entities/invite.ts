import { randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import type { ListSpec } from '#shared/db/pages';
import type { TableRef } from '#shared/db/table-def';
import type { TransactPart } from '#shared/db/transact';
import { groupBy } from '#shared/group-by';
import type { PageQuery } from '#shared/page-window';
import { isoNow } from '#shared/time';
import { type Key, merchantPk, nullableString, parseStored, storedItem, updateIfAllowed, updateItem } from './base';
import { batchGet } from './batch';
import { blockOf, countChange, padBlock, readBlockCounts } from './counter';
import { ALL_BUCKET, primaryListEntry } from './list-entry';
import { notificationState } from './notification';

/** An invitation, and the projection of invited addresses the `email` filter reads (docs/design-notes.md#pagination). */
const inviteSchema = z.looseObject({
  uuid: z.string(),
  seq: z.number(),
  email: z.string(),
  sender_email: nullableString(),
  content: nullableString(),
  link_used_at: nullableString(),
  created_at: z.string(),
  updated_at: z.string(),
  ...notificationState,
});
export type InviteItem = z.output<typeof inviteSchema>;

export const { key: inviteKey, parse: parseInvite, get: getInvite } = storedItem('invite', inviteSchema, 'INVITE#');

export const inviteRecord = (
  merchantId: string,
  invite: Pick<InviteItem, 'seq' | 'email'> &
    Partial<Pick<InviteItem, 'uuid' | 'sender_email' | 'content' | 'link_used_at' | 'created_at'>>,
  now = isoNow(),
) => {
  const uuid = invite.uuid ?? randomUUID();
  return {
    ...inviteKey(merchantId, uuid),
    ...primaryListEntry(merchantId, 'invites', ALL_BUCKET, invite.seq),
    type: 'invite',
    uuid,
    seq: invite.seq,
    email: invite.email.toLowerCase(),
    sender_email: invite.sender_email ?? null,
    content: invite.content ?? null,
    link_used_at: invite.link_used_at ?? null,
    created_at: invite.created_at ?? now,
    updated_at: now,
  };
};

export const putInvitePart = (item: ReturnType<typeof inviteRecord>): TransactPart => ({
  Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
});

export const inviteCountChange = (invite: Pick<InviteItem, 'seq'>) => countChange('invites', ALL_BUCKET, invite.seq);

/** Sets the invitation's `link_used_at` once: the invite as it is then, undefined when it is missing or was marked already. */
export const markInviteLinkUsed = async (db: TableRef, merchantId: string, uuid: string, now: string) => {
  const marked = await updateIfAllowed(db, {
    Key: inviteKey(merchantId, uuid),
    UpdateExpression: 'SET link_used_at = :now, updated_at = :now',
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(link_used_at) OR link_used_at = :null)',
    ExpressionAttributeValues: { ':now': now, ':null': null },
  });
  return marked && parseInvite(marked);
};

export const inviteList = (merchantId: string): ListSpec<InviteItem> => ({
  merchantId,
  list: 'invites',
  buckets: [ALL_BUCKET],
  parse: parseInvite,
});

const emailBlockKey = (merchantId: string, block: number): Key => ({ pk: `${merchantPk(merchantId)}#INVITE_EMAILS`, sk: padBlock(block) });

type ProjectionEntry = Pick<InviteItem, 'seq' | 'uuid' | 'email'>;

/** Adds invites to the projection: one UpdateItem per block touched (per 50 invites: expressions are capped at 4 KB). */
export const addToEmailProjection = async (db: TableRef, merchantId: string, invites: readonly ProjectionEntry[]) => {
  const chunks = groupBy(invites, (invite) => `${blockOf(invite.seq)}:${Math.floor(invite.seq / 50)}`);
  await Promise.all(
    [...chunks.values()].map((block) =>
      updateItem(db, {
        Key: emailBlockKey(merchantId, blockOf(block[0]?.seq ?? 0)),
        UpdateExpression: `SET ${block.map((_, index) => `#s${index} = :s${index}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(block.map((invite, index) => [`#s${index}`, `s${invite.seq}`])),
        ExpressionAttributeValues: Object.fromEntries(block.map((invite, index) => [`:s${index}`, `${invite.uuid}:${invite.email}`])),
      }),
    ),
  );
};

const projectionItem = z.looseObject({ sk: z.string() });

/** The entries of one projection item (`s<seq>` = `<uuid>:<email>`). */
const projectionEntries = (item: Record<string, unknown>): ProjectionEntry[] => {
  const entries: ProjectionEntry[] = [];
  for (const [name, value] of Object.entries(item)) {
    if (!/^s\d+$/.test(name) || typeof value !== 'string') continue; // not `sk` or `pk`
    const separator = value.indexOf(':');
    entries.push({ seq: Number(name.slice(1)), uuid: value.slice(0, separator), email: value.slice(separator + 1) });
  }
  return entries;
};

/** The projection blocks this container has read, per merchant (the least recently used dropped), each with the block count it matched. */
type CachedBlock = { count: number; entries: ProjectionEntry[] };
const projectionCache = new Map<string, Map<number, CachedBlock>>();
const MAX_CACHED_MERCHANTS = 50;

const cachedBlocks = (merchantId: string): Map<number, CachedBlock> => {
  const blocks = projectionCache.get(merchantId) ?? new Map<number, CachedBlock>();
  projectionCache.delete(merchantId);
  projectionCache.set(merchantId, blocks);
  const oldest = projectionCache.keys().next().value;
  if (projectionCache.size > MAX_CACHED_MERCHANTS && oldest !== undefined) projectionCache.delete(oldest);
  return blocks;
};

/** The merchant's whole e-mail projection: only the blocks not read yet or whose entries no longer match their count are read. */
const readEmailProjection = async (db: TableRef, merchantId: string): Promise<ProjectionEntry[]> => {
  const counts = await readBlockCounts(db, merchantId, 'invites', ALL_BUCKET);
  const blocks = cachedBlocks(merchantId);
  for (const block of blocks.keys()) if (!counts.has(block)) blocks.delete(block);
  const trusted = (block: number, n: number) => {
    const cached = blocks.get(block);
    return cached !== undefined && cached.count === n && cached.entries.length === n;
  };
  const stale = [...counts].filter(([block, n]) => !trusted(block, n));
  for (const [block, count] of stale) blocks.set(block, { count, entries: [] });
  const staleKeys = stale.map(([block]) => emailBlockKey(merchantId, block));
  for (const raw of await batchGet(db, staleKeys)) {
    const item = parseStored('invite e-mail projection', projectionItem, raw);
    const block = Number(item.sk);
    blocks.set(block, { count: counts.get(block) ?? 0, entries: projectionEntries(item) });
  }
  return [...blocks.values()].flatMap((block) => block.entries);
};

/** One page of the invitations whose address contains `needle`, newest first: the projection matched in memory, then one BatchGetItem. */
export const findInvitesByEmail = async (db: TableRef, merchantId: string, needle: string, request: PageQuery) => {
  const matches = (await readEmailProjection(db, merchantId)).filter((entry) => entry.email.includes(needle));
  matches.sort((a, b) => b.seq - a.seq);
  const offset = (request.page - 1) * request.per_page;
  const selected = matches.slice(offset, offset + request.per_page);
  const keys = selected.map((match) => inviteKey(merchantId, match.uuid));
  const items = (await batchGet(db, keys)).map(parseInvite);
  return { total: matches.length, items: items.sort((a, b) => b.seq - a.seq) };
};
