import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { recountBlock, recountMarkedBlock, settleOrderNumbers } from '#shared/db/entities/count-repair';
import { applyCountChanges, CountNotKept, leaveOrderNumberUnused, readBlockRange, refreshGroupTotals } from '#shared/db/entities/counter';
import type { TableRef } from '#shared/db/table-def';
import { conditionFailed, ddbMock, indexItems, resetAwsMocks } from './support/aws';

const db: TableRef = { ddb: DynamoDBDocumentClient.from(new DynamoDBClient({})), table: 'unit-table' };
const MERCHANT = 'm-1';
const COUNTS_PK = 'M#m-1#COUNTS';
const BLOCK_2 = { pk: COUNTS_PK, sk: 'invites#all#00000002' };
const ORDER_513 = { list: 'invites', bucket: 'all', seq: 513, delta: 1 } as const;

const updatesOf = (key: { pk: string; sk: string }) =>
  ddbMock
    .commandCalls(UpdateCommand)
    .map((call) => call.args[0].input as UpdateCommandInput)
    .filter((input) => input.Key?.pk === key.pk && input.Key?.sk === key.sk);
const isMark = (input: UpdateCommandInput) => String(input.UpdateExpression).includes('marked_at = :now');

beforeEach(() => resetAwsMocks());

describe('keeping a block count after a committed change', () => {
  it('adds the change to its block, and 1 to its version, and marks nothing when the first attempt succeeds', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({ $metadata: { attempts: 1 } });

    // Act
    await applyCountChanges(db, MERCHANT, [ORDER_513]);

    // Assess
    const updates = updatesOf(BLOCK_2);
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({
      UpdateExpression: 'ADD n :delta, v :one SET #type = :type, changed_at = :now',
      ExpressionAttributeValues: { ':delta': 1, ':one': 1 },
    });
    expect(Date.parse(String(updates[0]?.ExpressionAttributeValues?.[':now']))).toBeGreaterThan(Date.now() - 60_000);
  });

  it('marks the block for recount when the ADD needed a retry, because a timed-out attempt may have been applied too', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({ $metadata: { attempts: 2 } });

    // Act
    await applyCountChanges(db, MERCHANT, [ORDER_513]);

    // Assess
    const mark = updatesOf(BLOCK_2).find(isMark);
    // The mark is an entry in the merchant's own RECOUNT partition of gsi2, due when marked.
    expect(mark).toMatchObject({
      UpdateExpression:
        'ADD n :zero SET #type = :type, marked_at = :now, gsi2pk = :workPartition, gsi2sk = if_not_exists(gsi2sk, :workSince)',
      ExpressionAttributeValues: { ':workPartition': 'M#m-1#RECOUNT', ':zero': 0 },
    });
    expect(mark?.ExpressionAttributeValues?.[':workSince']).toBe(mark?.ExpressionAttributeValues?.[':now']);
  });

  it('marks the block for recount when the ADD failed, and reports nothing to the caller', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).callsFake(async (input: UpdateCommandInput) => {
      if (!isMark(input)) throw Object.assign(new Error('Request timed out'), { name: 'TimeoutError' });
      return { $metadata: { attempts: 1 } };
    });

    // Act
    const kept = applyCountChanges(db, MERCHANT, [ORDER_513]);

    // Assess
    await expect(kept).resolves.toBeUndefined();
    expect(updatesOf(BLOCK_2).filter(isMark)).toHaveLength(1);
  });

  it('names the block it could neither count nor mark, for the log and `admin recount`', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));

    // Act
    const kept = applyCountChanges(db, MERCHANT, [ORDER_513]);

    // Assess
    await expect(kept).rejects.toBeInstanceOf(CountNotKept);
    await expect(kept).rejects.toThrow('M#m-1#COUNTS invites#all#00000002');
  });
});

describe('recounting a block from the list index', () => {
  const stubBlock = (state: Record<string, unknown> | undefined, indexCount: number) => {
    ddbMock.on(GetCommand, { Key: BLOCK_2 }).resolves({ Item: state });
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolves(indexItems(indexCount));
  };

  it('sets the count to what the index holds in the block, only if nothing changed meanwhile, adds 1 to its version and removes the mark', async () => {
    // Prepare
    stubBlock({ n: 7, marked_at: '2026-11-23T00:00:00.000Z' }, 9);
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await recountBlock(db, MERCHANT, 'invites', 'all', 2);

    // Assess
    expect(result).toEqual({ list: 'invites', bucket: 'all', block: 2, before: 7, after: 9 });
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi1',
      ProjectionExpression: '#updated',
      ExpressionAttributeValues: { ':pk': 'M#m-1#invites#all', ':first': '000000000512', ':last': '000000000767' },
    });
    expect(updatesOf(BLOCK_2)[0]).toMatchObject({
      UpdateExpression: 'SET n = :after, v = if_not_exists(v, :zero) + :one, #type = :type REMOVE marked_at, gsi2pk, gsi2sk',
      ConditionExpression: 'n = :before AND marked_at = :markedAt',
      ExpressionAttributeValues: { ':after': 9, ':before': 7, ':markedAt': '2026-11-23T00:00:00.000Z', ':zero': 0, ':one': 1 },
    });
  });

  it('leaves a block changed a moment ago as it is and marks it again, since the index may not show that change yet', async () => {
    // Prepare: the block holds 8 since an ADD 1 s ago; the index, a moment behind, shows 7 items.
    const now = Date.parse('2026-11-27T12:00:00.000Z');
    stubBlock({ n: 8, marked_at: '2026-11-27T11:59:00.000Z', changed_at: '2026-11-27T11:59:59.000Z' }, 7);
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await recountBlock(db, MERCHANT, 'invites', 'all', 2, { now: () => now });

    // Assess: no short count written; the mark renewed, so the change feed schedules the recount again.
    expect(result).toBe('marked');
    const updates = updatesOf(BLOCK_2);
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({ ExpressionAttributeValues: { ':now': '2026-11-27T12:00:00.000Z' } });
    expect(isMark(updates[0] as UpdateCommandInput)).toBe(true);
  });

  it('leaves a block whose index holds an item written a moment ago as it is and marks it again, since its count change may still be on its way', async () => {
    // Prepare: the block's last ADD is old; an item written 2 s ago is in the index, its own ADD not landed yet.
    const now = Date.parse('2026-11-27T12:00:00.000Z');
    ddbMock
      .on(GetCommand, { Key: BLOCK_2 })
      .resolves({ Item: { n: 7, marked_at: '2026-11-27T11:00:00.000Z', changed_at: '2026-11-27T11:00:00.000Z' } });
    ddbMock
      .on(QueryCommand, { IndexName: 'gsi1' })
      .resolves({ Items: [...indexItems(7).Items, { updated_at: '2026-11-27T11:59:58.000Z' }], Count: 8 });
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await recountBlock(db, MERCHANT, 'invites', 'all', 2, { now: () => now });

    // Assess: no count written over (the ADD would make it 9); the mark renewed for a later recount.
    expect(result).toBe('marked');
    const updates = updatesOf(BLOCK_2);
    expect(updates).toHaveLength(1);
    expect(isMark(updates[0] as UpdateCommandInput)).toBe(true);
  });

  it('recounts a block holding an item dated far ahead (an import), which is no recent write', async () => {
    // Prepare
    const now = Date.parse('2026-11-27T12:00:00.000Z');
    ddbMock.on(GetCommand, { Key: BLOCK_2 }).resolves({ Item: { n: 7 } });
    ddbMock
      .on(QueryCommand, { IndexName: 'gsi1' })
      .resolves({ Items: [...indexItems(7).Items, { updated_at: '2030-01-01T00:00:00.000Z' }], Count: 8 });
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await recountBlock(db, MERCHANT, 'invites', 'all', 2, { now: () => now });

    // Assess
    expect(result).toEqual({ list: 'invites', bucket: 'all', block: 2, before: 7, after: 8 });
  });

  it('recounts a block whose last change is older than the quiet time', async () => {
    // Prepare
    const now = Date.parse('2026-11-27T12:00:00.000Z');
    stubBlock({ n: 8, marked_at: '2026-11-27T11:59:00.000Z', changed_at: '2026-11-27T11:59:49.000Z' }, 7);
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await recountBlock(db, MERCHANT, 'invites', 'all', 2, { now: () => now });

    // Assess: written only if no ADD (one that leaves n as it was included) landed since the read.
    expect(result).toEqual({ list: 'invites', bucket: 'all', block: 2, before: 8, after: 7 });
    expect(updatesOf(BLOCK_2).some(isMark)).toBe(false);
    expect(updatesOf(BLOCK_2)[0]).toMatchObject({
      ConditionExpression: 'n = :before AND marked_at = :markedAt AND changed_at = :changedAt',
      ExpressionAttributeValues: expect.objectContaining({ ':changedAt': '2026-11-27T11:59:49.000Z' }),
    });
  });

  it('counts a tier bucket of the affiliates on the tier index (gsi3)', async () => {
    // Prepare
    ddbMock.on(GetCommand).resolves({ Item: { n: 1 } });
    ddbMock.on(QueryCommand, { IndexName: 'gsi3' }).resolves(indexItems(1));
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    await recountBlock(db, MERCHANT, 'affiliates', 'tier:gold', 0);

    // Assess
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi3',
      ExpressionAttributeValues: expect.objectContaining({ ':pk': 'M#m-1#affiliates#tier%3Agold' }),
    });
  });

  it('counts again instead of overwriting when an ADD lands between its read and its write', async () => {
    // Prepare
    ddbMock
      .on(GetCommand, { Key: BLOCK_2 })
      .resolvesOnce({ Item: { n: 7 } })
      .resolves({ Item: { n: 8 } });
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolvesOnce(indexItems(9)).resolves(indexItems(10));
    ddbMock.on(UpdateCommand).rejectsOnce(conditionFailed()).resolves({});

    // Act
    const result = await recountBlock(db, MERCHANT, 'invites', 'all', 2);

    // Assess
    expect(result).toEqual({ list: 'invites', bucket: 'all', block: 2, before: 8, after: 10 });
    expect(updatesOf(BLOCK_2)).toHaveLength(2);
  });

  it('leaves a block that kept changing through every attempt marked, for its follow-up to try again', async () => {
    // Prepare
    stubBlock({ n: 7, marked_at: '2026-11-23T00:00:00.000Z' }, 9);
    ddbMock.on(UpdateCommand).rejects(conditionFailed());

    // Act
    const result = await recountBlock(db, MERCHANT, 'invites', 'all', 2);

    // Assess
    expect(result).toBeUndefined();
    expect(updatesOf(BLOCK_2).every((input) => input.ConditionExpression === 'n = :before AND marked_at = :markedAt')).toBe(true);
  });

  it('recounts the block a marked count item names (a RECOUNT follow-up carries only its key)', async () => {
    // Prepare
    stubBlock({ n: 7, marked_at: '2026-11-23T00:00:00.000Z' }, 9);
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await recountMarkedBlock(db, BLOCK_2);

    // Assess
    expect(result).toEqual({ list: 'invites', bucket: 'all', block: 2, before: 7, after: 9 });
    expect(ddbMock).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi1',
      ExpressionAttributeValues: { ':pk': 'M#m-1#invites#all', ':first': '000000000512', ':last': '000000000767' },
    });
    expect(updatesOf(BLOCK_2)[0]?.UpdateExpression).toBe(
      'SET n = :after, v = if_not_exists(v, :zero) + :one, #type = :type REMOVE marked_at, gsi2pk, gsi2sk',
    );
  });
});

describe('refreshing group totals (64 blocks each) from their block counts', () => {
  const GROUP_1 = { pk: COUNTS_PK, sk: 'invites#all#G#00000001' };
  /** The block items of blocks 64-127 (group 1) as a consistent Query answers them. */
  const stubGroupBlocks = (blocks: { n: number; v?: number }[]) =>
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': COUNTS_PK, ':from': 'invites#all#00000064', ':to': 'invites#all#00000127' } })
      .resolves({ Items: blocks });

  it('reads each group touched once, consistently, and writes its sum of counts and of versions, only over a lower vs', async () => {
    // Prepare
    stubGroupBlocks([
      { n: 256, v: 3 },
      { n: 200, v: 9 },
      { n: 0 }, // a block only marked for recount once: no version yet
    ]);
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const refreshed = await refreshGroupTotals(db, MERCHANT, [
      { list: 'invites', bucket: 'all', block: 64 },
      { list: 'invites', bucket: 'all', block: 100 },
      { list: 'invites', bucket: 'all', block: 127 },
    ]);

    // Assess
    expect(refreshed).toEqual([{ list: 'invites', bucket: 'all', group: 1, n: 456, vs: 12, written: true }]);
    const reads = ddbMock.commandCalls(QueryCommand);
    expect(reads).toHaveLength(1);
    expect(reads[0]?.args[0].input).toMatchObject({
      ConsistentRead: true,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    });
    expect(updatesOf(GROUP_1)).toEqual([
      expect.objectContaining({
        UpdateExpression: 'SET #n = :n, #vs = :vs, #type = :type',
        ConditionExpression: 'attribute_not_exists(#vs) OR #vs < :vs',
        ExpressionAttributeValues: { ':n': 456, ':vs': 12, ':type': 'list_group_total' },
      }),
    ]);
  });

  it('leaves a newer state in place: a refused write (a higher or equal vs stored) is no error', async () => {
    // Prepare: this refresh read an older state (vs 12) than the one already written by another.
    stubGroupBlocks([{ n: 456, v: 12 }]);
    ddbMock.on(UpdateCommand).rejects(conditionFailed());

    // Act
    const refreshed = refreshGroupTotals(db, MERCHANT, [{ list: 'invites', bucket: 'all', block: 70 }]);

    // Assess
    await expect(refreshed).resolves.toEqual([{ list: 'invites', bucket: 'all', group: 1, n: 456, vs: 12, written: false }]);
    expect(updatesOf(GROUP_1)).toHaveLength(1);
  });

  it('writes no total for a group without any block item', async () => {
    // Prepare
    stubGroupBlocks([]);

    // Act
    const refreshed = await refreshGroupTotals(db, MERCHANT, [{ list: 'invites', bucket: 'all', block: 64 }]);

    // Assess
    expect(refreshed).toEqual([]);
    expect(ddbMock.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('throws what is not a refusal, after trying every group', async () => {
    // Prepare
    ddbMock.on(QueryCommand).resolves({ Items: [{ n: 1, v: 1 }] });
    ddbMock
      .on(UpdateCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }))
      .on(UpdateCommand, { Key: { pk: COUNTS_PK, sk: 'affiliate_requests#pending#G#00000000' } })
      .resolves({});

    // Act
    const refreshed = refreshGroupTotals(db, MERCHANT, [
      { list: 'invites', bucket: 'all', block: 64 },
      { list: 'affiliate_requests', bucket: 'pending', block: 3 },
    ]);

    // Assess
    await expect(refreshed).rejects.toThrow('Rate exceeded');
    expect(ddbMock.commandCalls(UpdateCommand)).toHaveLength(2);
  });
});

describe("the orders' block counts derived from the sequence", () => {
  const QUOTA = { pk: 'M#m-1#QUOTA', sk: 'QUOTA' };
  const ORDER_BLOCK_2 = { pk: COUNTS_PK, sk: 'orders#all#00000002' };
  /** The quota item: 700 numbers handed out, derived counts from block 2 (512) on. */
  const stubSequence = (quota: Record<string, unknown> = { orders_seq: 700, orders_derived_from: 512 }) => {
    ddbMock.on(QueryCommand, { ExpressionAttributeValues: { ':pk': QUOTA.pk, ':sk': QUOTA.sk } }).resolves({ Items: [quota] });
    ddbMock.on(GetCommand, { Key: QUOTA }).resolves({ Item: quota });
  };

  it('reads a block from the derived ones as its numbers taken less its holes, and blocks below as their ADDs counted', async () => {
    // Prepare: block 1 counted by ADD (200); block 2 (512-767) holds the sequence's 189 numbers, 3 of them holes
    stubSequence();
    ddbMock.on(QueryCommand, { ExpressionAttributeValues: { ':pk': COUNTS_PK } }).resolves({
      Items: [
        { sk: 'orders#all#00000002', n: 5, holes: new Set([520, 600, 690]) },
        { sk: 'orders#all#00000001', n: 200 },
      ],
    });

    // Act
    const counts = await readBlockRange(db, MERCHANT, 'orders', 'all', { newestFirst: true, limit: 64 });

    // Assess: the ADDs that still land on a derived block (a create of the code before) change nothing
    expect(counts).toEqual([
      { block: 2, n: 700 - 512 + 1 - 3 },
      { block: 1, n: 200 },
    ]);
  });

  it('reads every block the sequence reached, with or without an item, and a recounted block as its recount', async () => {
    // Prepare
    stubSequence({ orders_seq: 1000, orders_derived_from: 512 });
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': COUNTS_PK } })
      .resolves({ Items: [{ sk: 'orders#all#00000002', n: 250, exact: true, holes: new Set([513]) }] });

    // Act
    const counts = await readBlockRange(db, MERCHANT, 'orders', 'all', { newestFirst: true, limit: 64 });

    // Assess: block 3 is full without a hole (768-1023 taken to 1000), block 2 is its recount
    expect(counts).toEqual([
      { block: 3, n: 1000 - 768 + 1 },
      { block: 2, n: 250 },
    ]);
  });

  it('notes a number left unused as a hole of its derived block, moving its version, and nothing on a block counted by ADD', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    await leaveOrderNumberUnused(db, MERCHANT, { seq: 600, derivedFrom: 512 });
    await leaveOrderNumberUnused(db, MERCHANT, { seq: 600 });
    await leaveOrderNumberUnused(db, MERCHANT, { seq: 300, derivedFrom: 512 });

    // Assess
    expect(ddbMock.commandCalls(UpdateCommand)).toHaveLength(1);
    expect(updatesOf(ORDER_BLOCK_2)).toEqual([
      expect.objectContaining({
        UpdateExpression: 'ADD holes :holes, v :one SET #type = :type, changed_at = :now',
        ExpressionAttributeValues: expect.objectContaining({ ':holes': new Set([600]) }),
      }),
    ]);
  });

  it('totals a closed group from its derived blocks, with the numbers it took in its version sum', async () => {
    // Prepare: group 0 (blocks 0-63) derived from block 2 on, closed: the sequence is in group 1
    stubSequence({ orders_seq: 20_000, orders_derived_from: 512 });
    ddbMock
      .on(QueryCommand, { ExpressionAttributeValues: { ':pk': COUNTS_PK, ':from': 'orders#all#00000000', ':to': 'orders#all#00000063' } })
      .resolves({
        Items: [
          { sk: 'orders#all#00000000', n: 255, v: 255 },
          { sk: 'orders#all#00000001', n: 256, v: 256 },
          { sk: 'orders#all#00000005', holes: new Set([1300, 1301]), v: 2 },
        ],
      });
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const refreshed = await refreshGroupTotals(db, MERCHANT, [{ list: 'orders', bucket: 'all', block: 5 }]);

    // Assess
    expect(refreshed).toEqual([{ list: 'orders', bucket: 'all', group: 0, n: 255 + 256 + 62 * 256 - 2, vs: 513 + 16_383, written: true }]);
  });

  it('leaves the count of the block the sequence is in as it is (it is derived) and drops its mark: its closing recount needs none', async () => {
    // Prepare
    stubSequence();
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await recountBlock(db, MERCHANT, 'orders', 'all', 2);

    // Assess: one write, removing the mark and its owed-work entry, if there is a mark
    expect(result).toBe('derived');
    expect(ddbMock.commandCalls(UpdateCommand).map((call) => call.args[0].input)).toEqual([
      {
        TableName: 'unit-table',
        Key: ORDER_BLOCK_2,
        UpdateExpression: 'REMOVE marked_at, gsi2pk, gsi2sk',
        ConditionExpression: 'attribute_exists(marked_at)',
      },
    ]);
  });

  it('takes an open derived block without a mark as it is', async () => {
    // Prepare
    stubSequence();
    ddbMock.on(UpdateCommand).rejects(conditionFailed());

    // Act
    const result = await recountBlock(db, MERCHANT, 'orders', 'all', 2);

    // Assess
    expect(result).toBe('derived');
  });

  it('recounts a closed derived block from the index and marks it exact, so that holes it never noted stop counting', async () => {
    // Prepare: block 2 closed (the sequence is at 800), 1 hole noted, the index holds 250
    stubSequence({ orders_seq: 800, orders_derived_from: 512 });
    ddbMock.on(GetCommand, { Key: ORDER_BLOCK_2 }).resolves({ Item: { holes: new Set([600]) } });
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolves(indexItems(250));
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const result = await recountBlock(db, MERCHANT, 'orders', 'all', 2);

    // Assess
    expect(result).toEqual({ list: 'orders', bucket: 'all', block: 2, before: 255, after: 250 });
    expect(updatesOf(ORDER_BLOCK_2)).toEqual([
      expect.objectContaining({
        UpdateExpression:
          'SET n = :after, v = if_not_exists(v, :zero) + :one, #type = :type, exact = :exact REMOVE marked_at, gsi2pk, gsi2sk',
        ConditionExpression: 'attribute_not_exists(n) AND attribute_not_exists(marked_at)',
      }),
    ]);
  });

  it('notes the settled numbers that name no order and are no hole yet, in one ADD of a set, reading the index over those numbers only', async () => {
    // Prepare: 600-605 settled; the index names 600, 602 and 605; 603 is a hole already
    ddbMock.on(GetCommand, { Key: ORDER_BLOCK_2 }).resolves({ Item: { holes: new Set([603]) } });
    ddbMock
      .on(QueryCommand, { IndexName: 'gsi1' })
      .resolves({ Items: [{ gsi1sk: '000000000600' }, { gsi1sk: '000000000602' }, { gsi1sk: '000000000605' }] });
    ddbMock.on(UpdateCommand).resolves({});

    // Act
    const noted = await settleOrderNumbers(db, ORDER_BLOCK_2, 600, 605);

    // Assess
    expect(noted).toBe(2);
    expect(ddbMock.commandCalls(QueryCommand)[0]?.args[0].input.ExpressionAttributeValues).toEqual({
      ':pk': 'M#m-1#orders#all',
      ':first': '000000000600',
      ':last': '000000000605',
    });
    expect(updatesOf(ORDER_BLOCK_2)).toEqual([
      expect.objectContaining({
        UpdateExpression: 'ADD holes :holes, v :one SET #type = :type, changed_at = :now',
        ExpressionAttributeValues: expect.objectContaining({ ':holes': new Set([601, 604]) }),
      }),
    ]);
  });

  it('writes nothing when every settled number names an order, or when the block was recounted exact', async () => {
    // Prepare
    ddbMock.on(GetCommand, { Key: ORDER_BLOCK_2 }).resolves({ Item: {} });
    ddbMock.on(QueryCommand, { IndexName: 'gsi1' }).resolves({ Items: [{ gsi1sk: '000000000600' }] });

    // Act
    const allNamed = await settleOrderNumbers(db, ORDER_BLOCK_2, 600, 600);
    ddbMock.on(GetCommand, { Key: ORDER_BLOCK_2 }).resolves({ Item: { exact: true, n: 3 } });
    const exact = await settleOrderNumbers(db, ORDER_BLOCK_2, 600, 610);

    // Assess
    expect([allNamed, exact]).toEqual([0, 0]);
    expect(ddbMock.commandCalls(UpdateCommand)).toHaveLength(0);
  });
});
