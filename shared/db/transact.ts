import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { classifyDependencyError } from '#shared/dependency-errors';
import type { TableRef } from './table-def';

type Item = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
type WithoutTable<T> = T extends object ? Omit<T, 'TableName'> : never;

/** One part of a transaction, written without its table (transactWrite adds it). */
export type TransactPart = { [K in keyof Item]-?: Record<K, WithoutTable<Item[K]>> }[keyof Item];

/** A transaction its conditions refused: the parts whose condition failed, by name, and the old items of those that asked (ALL_OLD). */
export class TransactionRefused extends Error {
  override name = 'TransactionRefused';
  constructor(
    readonly failed: readonly string[],
    readonly oldItems: Readonly<Record<string, Record<string, unknown>>>,
  ) {
    super(`Transaction refused by ${failed.join(', ')}`);
  }

  refusedBy(part: string): boolean {
    return this.failed.includes(part);
  }
}

const withTable = (table: string, part: TransactPart): Item => {
  const [kind, write] = Object.entries(part)[0] as [string, object];
  return { [kind]: { ...write, TableName: table } } as Item;
};

/** TransactWriteItems over named parts: refused by conditions, a TransactionRefused; anything else (a conflict) is rethrown as it is. */
export const transactWrite = async ({ ddb, table }: TableRef, parts: Readonly<Record<string, TransactPart>>): Promise<void> => {
  const names = Object.keys(parts);
  try {
    await ddb.send(new TransactWriteCommand({ TransactItems: names.map((name) => withTable(table, parts[name] as TransactPart)) }));
  } catch (error) {
    if (!(error instanceof TransactionCanceledException) || classifyDependencyError(error) !== 'refused') throw error;
    const reasons = error.CancellationReasons ?? [];
    const failed = names.filter((_, index) => reasons[index]?.Code === 'ConditionalCheckFailed');
    if (failed.length === 0) throw error;
    const oldItems: Record<string, Record<string, unknown>> = {};
    names.forEach((name, index) => {
      const old = reasons[index]?.Item;
      // The document client does not unmarshall exceptions: old images arrive in wire format.
      if (old) oldItems[name] = unmarshall(old as Parameters<typeof unmarshall>[0]);
    });
    throw new TransactionRefused(failed, oldItems);
  }
};
