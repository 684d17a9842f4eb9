import type { TableRef } from '#shared/db/table-def';
import { type Key, updateItem, writeApplied } from './base';

/**
 * Sets `fields` on an item only while its `mark` attribute is absent or below the new value, so writers
 * that race or repeat only ever move it forward; false when a later value is there.
 */
export const moveForward = async (db: TableRef, key: Key, mark: string, fields: Record<string, unknown>): Promise<boolean> => {
  const names = Object.keys(fields);
  if (!names.includes(mark)) throw new Error(`moveForward: the fields do not set the mark ${mark}`);
  return writeApplied(
    updateItem(db, {
      Key: key,
      UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')}`,
      ConditionExpression: `attribute_not_exists(#${mark}) OR #${mark} < :${mark}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name) => [`#${name}`, name])),
      ExpressionAttributeValues: Object.fromEntries(names.map((name) => [`:${name}`, fields[name]])),
    }),
  );
};
