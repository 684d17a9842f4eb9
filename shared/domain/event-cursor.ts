import { isPosition } from '#shared/db/entities/event-log';
import { encodeCursor as encodePositionCursor } from '#shared/http/pagination';

/** The event log's cursor: a position and a time (epoch seconds) by which all after it was logged, bound to stage and merchant. */
export const DAY_SECONDS = 24 * 3600;

/** `floor`: events logged before `since` are passed over (a first read's, until it has reached the last 30 days). */
export type Cursor = { position: string; since: number; floor?: boolean };

const scopeOf = (stage: string, merchantId: string) => `events\n${stage}\n${merchantId}`;

export const encodeCursor = (stage: string, merchantId: string, cursor: Cursor): string =>
  encodePositionCursor(`${cursor.position}|${cursor.since}${cursor.floor ? '|floor' : ''}`, scopeOf(stage, merchantId));

/** The cursor, or undefined when it is not one this stage handed to this merchant (re-encoding it must give the same text). */
export const decodeCursor = (stage: string, merchantId: string, text: string): Cursor | undefined => {
  const [body, tag, ...rest] = text.split('.');
  if (body === undefined || tag === undefined || rest.length > 0) return undefined;
  const payload = Buffer.from(body, 'base64url').toString();
  if (encodePositionCursor(payload, scopeOf(stage, merchantId)) !== text) return undefined;
  const [position, since, floor, ...more] = payload.split('|');
  if (position === undefined || !isPosition(position) || !/^\d{1,12}$/.test(since ?? '')) return undefined;
  if (more.length > 0 || (floor !== undefined && floor !== 'floor')) return undefined;
  return { position, since: Number(since), ...(floor ? { floor: true } : {}) };
};
