import { randomBytes } from 'node:crypto';
import { logger } from '#shared/logger';
import type { ApiMiddleware } from './types';

/** `<UTC date-time>:api:<short id>`, e.g. `2026-11-22T06:01:02Z:api:7f3a9c1e`. */
export const newTraceId = (now: Date = new Date()): string =>
  `${now.toISOString().replace(/\.\d{3}Z$/, 'Z')}:api:${randomBytes(4).toString('hex')}`;

export const TRACE_ID_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z:api:[0-9a-f]{8}$/;

/** Gives each request its trace id, in the context (for meta.trace_id) and in every log line. */
export const traceId = (): ApiMiddleware => ({
  before: (request) => {
    request.context.traceId = newTraceId();
    logger.appendKeys({ trace_id: request.context.traceId });
  },
});
