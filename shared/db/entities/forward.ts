import type { TableRef } from '#shared/db/table-def';
import { type Key, updateApplied } from './base';

/** Sets `fields` while the item's `mark` is absent or below the new value, so racing writers only move it forward; false when refused. */
export const moveForward = async (db: TableRef, key: Key, mark: string, fields: Record<string, unknown>): Promise<boolean> => {
  const names = Object.keys(fields);
  if (!names.includes(mark)) throw new Error(`moveForward: the fields do not set the mark ${mark}`);
  return updateApplied(db, {
    Key: key,
    UpdateExpression: `SET ${names.map((name) => `#${name} = :${name}`).join(', ')}`,
    ConditionExpression: `attribute_not_exists(#${mark}) OR #${mark} < :${mark}`,
    ExpressionAttributeNames: Object.fromEntries(names.map((name) => [`#${name}`, name])),
    ExpressionAttributeValues: Object.fromEntries(names.map((name) => [`:${name}`, fields[name]])),
  });
};
