import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type BatchGetCommandInput, DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { findInvitesByEmail } from '#shared/db/entities/invite';
import type { TableRef } from '#shared/db/table-def';
import { ddbMock, resetAwsMocks } from './support/aws';

const db: TableRef = { ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})), table: 'unit-table' };
const PROJECTION_PK = (merchant: string) => `M#${merchant}#INVITE_EMAILS`;
const PAGE = { page: 1, per_page: 15 };
let merchantCounter = 0;

type Invite = { seq: number; email: string };
const uuidOf = (seq: number) => `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`;

/**
 * A merchant's invites as the table holds them: the invite list's block counts, the e-mail
 * projection (one item per block of 256) and the invites themselves, served to Query and BatchGet.
 */
const stubMerchant = (merchant: string, state: { counts: Record<number, number>; projection: Invite[]; invites: Invite[] }) => {
  ddbMock
    .on(QueryCommand, { ExpressionAttributeValues: { ':pk': `M#${merchant}#COUNTS`, ':from': 'invites#all#00000000' } })
    .callsFake(async () => ({
      Items: Object.entries(state.counts).map(([block, n]) => ({ sk: `invites#all#${String(block).padStart(8, '0')}`, n })),
    }));
  ddbMock.on(BatchGetCommand).callsFake(async (input: BatchGetCommandInput) => {
    const keys = input.RequestItems?.['unit-table']?.Keys ?? [];
    const items = keys.flatMap((key) => {
      if (key.pk === PROJECTION_PK(merchant)) {
        const block = Number(key.sk);
        const entries = state.projection.filter((invite) => Math.floor(invite.seq / 256) === block);
        if (entries.length === 0) return [];
        return [
          {
            pk: key.pk,
            sk: key.sk,
            ...Object.fromEntries(entries.map((invite) => [`s${invite.seq}`, `${uuidOf(invite.seq)}:${invite.email}`])),
          },
        ];
      }
      const invite = state.invites.find((candidate) => `INVITE#${uuidOf(candidate.seq)}` === key.sk);
      return invite
        ? [
            {
              pk: key.pk,
              sk: key.sk,
              uuid: uuidOf(invite.seq),
              seq: invite.seq,
              email: invite.email,
              sender_email: null,
              content: null,
              link_used_at: null,
              created_at: 'x',
              updated_at: 'x',
            },
          ]
        : [];
    });
    return { Responses: { 'unit-table': items } };
  });
};

const projectionReads = () =>
  ddbMock
    .commandCalls(BatchGetCommand)
    .flatMap((call) => call.args[0].input.RequestItems?.['unit-table']?.Keys ?? [])
    .filter((key) => String(key.pk).endsWith('#INVITE_EMAILS'))
    .map((key) => Number(key.sk));

beforeEach(() => {
  resetAwsMocks();
  merchantCounter++;
});

describe('the invite e-mail filter', () => {
  it('reads every projection block once, then only the block whose count changed', async () => {
    // Prepare: 300 invites over blocks 0 and 1, every tenth on the needle's domain.
    const merchant = `m-${merchantCounter}`;
    const invites = Array.from({ length: 300 }, (_, index) => ({
      seq: index + 1,
      email: `guest${index + 1}@${index % 10 === 0 ? 'needle' : 'other'}.example`,
    }));
    const state = { counts: { 0: 255, 1: 45 }, projection: invites, invites };
    stubMerchant(merchant, state);
    const first = await findInvitesByEmail(db, merchant, 'needle', PAGE);
    const readsOfFirst = projectionReads();
    ddbMock.resetHistory();

    // Act: one more invite, in block 1.
    const added = { seq: 301, email: 'late@needle.example' };
    state.invites.push(added);
    state.counts[1] = 46;
    const second = await findInvitesByEmail(db, merchant, 'needle', PAGE);

    // Assess
    expect(readsOfFirst.sort()).toEqual([0, 1]);
    expect(first.total).toBe(30);
    expect(projectionReads()).toEqual([1]);
    expect(second.total).toBe(31);
    expect(second.items[0]?.email).toBe('late@needle.example');
  });

  it('reads no projection block when no count changed', async () => {
    // Prepare
    const merchant = `m-${merchantCounter}`;
    const invites = [{ seq: 1, email: 'a@needle.example' }];
    stubMerchant(merchant, { counts: { 0: 1 }, projection: invites, invites });
    await findInvitesByEmail(db, merchant, 'needle', PAGE);
    ddbMock.resetHistory();

    // Act
    const again = await findInvitesByEmail(db, merchant, 'needle', PAGE);

    // Assess
    expect(projectionReads()).toEqual([]);
    expect(again.total).toBe(1);
  });

  it('keeps re-reading a block whose projection lags its count, and finds the entry once it is written', async () => {
    // Prepare: the count says 2, the projection holds 1 (its second write is still on its way).
    const merchant = `m-${merchantCounter}`;
    const invites = [
      { seq: 1, email: 'a@needle.example' },
      { seq: 2, email: 'b@needle.example' },
    ];
    const state = { counts: { 0: 2 }, projection: invites.slice(0, 1), invites };
    stubMerchant(merchant, state);
    const lagging = await findInvitesByEmail(db, merchant, 'needle', PAGE);

    // Act
    state.projection = invites;
    const caughtUp = await findInvitesByEmail(db, merchant, 'needle', PAGE);

    // Assess
    expect(lagging.total).toBe(1);
    expect(caughtUp.total).toBe(2);
  });

  it('never takes the projection item keys for entries', async () => {
    // Prepare: an address that contains the digits of the block's sort key.
    const merchant = `m-${merchantCounter}`;
    const invites = [{ seq: 1, email: 'x@other.example' }];
    stubMerchant(merchant, { counts: { 0: 1 }, projection: invites, invites });

    // Act
    const found = await findInvitesByEmail(db, merchant, '0000', PAGE);

    // Assess
    expect(found.total).toBe(0);
  });
});
