import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, type PutCommandInput, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import * as z from 'zod/mini';
import type { $ZodType, output } from 'zod/v4/core';
import { queryKeyPrefix } from '#shared/db/query';
import type { Key, TableRef } from '#shared/db/table-def';

/** What every entity module builds on (docs/architecture.md#data-one-table-keyed-by-merchant): no key reaches another merchant's. */
export type { Key } from '#shared/db/table-def';

export const merchantPk = (merchantId: string): string => `M#${merchantId}`;

export const merchantIdOf = (pk: string): string => {
  if (!pk.startsWith('M#')) throw new Error(`Not a merchant partition key: ${pk}`);
  return pk.slice(2).split('#')[0] ?? '';
};

export const itemKey = (merchantId: string, sk: string): Key => ({ pk: merchantPk(merchantId), sk });

/** Sequence numbers are zero-padded so that their string order is their numeric order. */
export const padSeq = (seq: number): string => String(seq).padStart(12, '0');

/** A stored item that does not have its entity's shape: a defect or corrupt data, never the client's fault. */
export class StoredItemError extends Error {
  override name = 'StoredItemError';
}

/** Parses a stored item against its entity's schema (loose object schemas keep the other attributes, so it can be written back whole). */
export const parseStored = <S extends $ZodType>(entity: string, schema: S, raw: unknown): output<S> => {
  const result = z.safeParse(schema, raw);
  if (result.success) return result.data;
  const where = result.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
  throw new StoredItemError(`Stored ${entity} item is malformed at ${where}`);
};

export const parseStoredOptional = <S extends $ZodType>(entity: string, schema: S, raw: unknown): output<S> | undefined =>
  raw === undefined ? undefined : parseStored(entity, schema, raw);

/** Whether DynamoDB can store an item with this key (at most 2,048 and 1,024 UTF-8 bytes): a text the API accepts may make a longer one. */
export const isStorableKey = (key: Key): boolean => Buffer.byteLength(key.pk, 'utf8') <= 2048 && Buffer.byteLength(key.sk, 'utf8') <= 1024;

/** One item by its key (GetItem: consistent or not, or with `read`'s options as given), parsed as `entity`; undefined when there is none. */
export const getStored = async <S extends $ZodType>(
  { ddb, table }: TableRef,
  entity: string,
  schema: S,
  key: Key,
  read: boolean | { ConsistentRead?: boolean; ProjectionExpression?: string } = false,
): Promise<output<S> | undefined> => {
  if (!isStorableKey(key)) return undefined;
  const options = typeof read === 'boolean' ? { ConsistentRead: read } : read;
  const { Item } = await ddb.send(new GetCommand({ TableName: table, Key: key, ...options }));
  return parseStoredOptional(entity, schema, Item);
};

export const updateItem = ({ ddb, table }: TableRef, update: Omit<UpdateCommandInput, 'TableName'>) =>
  ddb.send(new UpdateCommand({ TableName: table, ...update }));

export const putItem = ({ ddb, table }: TableRef, put: Omit<PutCommandInput, 'TableName'>) =>
  ddb.send(new PutCommand({ TableName: table, ...put }));

/** An entity keyed `<prefix><id>` in its merchant's partition: its key, parse, GetItem read and every item of the merchant (one Query). */
export const storedItem = <S extends $ZodType>(entity: string, schema: S, prefix: string, id = (value: string) => value) => {
  const key = (merchantId: string, value: string): Key => itemKey(merchantId, `${prefix}${id(value)}`);
  const parse = (raw: unknown): output<S> => parseStored(entity, schema, raw);
  return {
    key,
    parse,
    get: (db: TableRef, merchantId: string, value: string, consistent = false) =>
      getStored(db, entity, schema, key(merchantId, value), consistent),
    all: async (db: TableRef, merchantId: string) => (await queryKeyPrefix(db, merchantPk(merchantId), prefix)).map(parse),
  };
};

/** Puts a new item; refused (ConditionalCheckFailedException) when an item with its key exists. */
export const putNew = (db: TableRef, item: Key & Record<string, unknown>) =>
  putItem(db, { Item: item, ConditionExpression: 'attribute_not_exists(pk)' });

/** A conditional UpdateItem: what it returns (ALL_NEW unless `ReturnValues` says otherwise; `{}` for NONE), or undefined when refused. */
export const updateIfAllowed = async (
  db: TableRef,
  update: Omit<UpdateCommandInput, 'TableName'>,
): Promise<Record<string, unknown> | undefined> => {
  try {
    return (await updateItem(db, { ReturnValues: 'ALL_NEW', ...update })).Attributes ?? {};
  } catch (error) {
    if (isRefused(error)) return undefined;
    throw error;
  }
};

/** Whether a write was refused by its condition (ConditionalCheckFailedException, by its name). */
export const isRefused = (error: unknown): boolean => (error as { name?: unknown } | undefined)?.name === 'ConditionalCheckFailedException';

/** Whether a conditional write was applied: false when its condition refused it; any other failure is thrown. */
export const writeApplied = async (write: Promise<unknown>): Promise<boolean> => {
  try {
    await write;
    return true;
  } catch (error) {
    if (isRefused(error)) return false;
    throw error;
  }
};

/** A conditional UpdateItem: whether it was applied (false when its condition refused it). */
export const updateApplied = (db: TableRef, update: Omit<UpdateCommandInput, 'TableName'>) => writeApplied(updateItem(db, update));

/** The item a write refused by its condition found there (ALL_OLD), unmarshalled; anything but a refusal is thrown again. */
export const refusedItem = (error: unknown): Record<string, unknown> | undefined => {
  if (!isRefused(error)) throw error;
  const item = (error as { Item?: Record<string, AttributeValue> }).Item;
  return item === undefined ? undefined : unmarshall(item);
};

/** A conditional UpdateItem: the item after it (`item`), or, refused, the item as it was (`refused`; undefined when there was none). */
export const updateOrRefused = async (
  db: TableRef,
  update: Omit<UpdateCommandInput, 'TableName'>,
): Promise<{ item: Record<string, unknown> | undefined } | { refused: Record<string, unknown> | undefined }> => {
  try {
    return {
      item: (await updateItem(db, { ReturnValues: 'ALL_NEW', ReturnValuesOnConditionCheckFailure: 'ALL_OLD', ...update })).Attributes,
    };
  } catch (error) {
    return { refused: refusedItem(error) };
  }
};

export const nullableString = () => z.nullable(z.string());
