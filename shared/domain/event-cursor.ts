import { createHash, timingSafeEqual } from 'node:crypto';
import { isPosition } from '#shared/db/entities/event-log';

/**
 * The event log's cursor, opaque to the merchant: a log position and a time (epoch seconds) at or
 * before which everything after that position was logged, in base64url, then a check over them,
 * the stage and the merchant. A cursor of another merchant or stage, or one altered, fails the
 * check; the position is only ever used inside the caller's own log partition anyway.
 */
export const DAY_SECONDS = 24 * 3600;

export type Cursor = { position: string; since: number };

const check = (stage: string, merchantId: string, payload: string) =>
  createHash('sha256').update(`${stage}\n${merchantId}\n${payload}`).digest().subarray(0, 12);

export const encodeCursor = (stage: string, merchantId: string, cursor: Cursor): string => {
  const payload = `${cursor.position}|${cursor.since}`;
  return `${Buffer.from(payload).toString('base64url')}.${check(stage, merchantId, payload).toString('base64url')}`;
};

/** The cursor, or undefined when it is not one this stage handed to this merchant. */
export const decodeCursor = (stage: string, merchantId: string, text: string): Cursor | undefined => {
  const [body, mac, ...rest] = text.split('.');
  if (body === undefined || mac === undefined || rest.length > 0) return undefined;
  const payload = Buffer.from(body, 'base64url').toString();
  // Compared as text, so no other spelling of the same bytes passes.
  const given = Buffer.from(mac);
  const expected = Buffer.from(check(stage, merchantId, payload).toString('base64url'));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const [position, since] = payload.split('|');
  if (position === undefined || !isPosition(position) || !/^\d{1,12}$/.test(since ?? '')) return undefined;
  return { position, since: Number(since) };
};
