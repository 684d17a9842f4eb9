import { logger } from '../logger';
import { newTraceId } from '../http/trace';
import type { ApiMiddleware } from './types';

/** Gives each request its trace id, in the context (for meta.trace_id) and in every log line. */
export const traceId = (): ApiMiddleware => ({
  before: (request) => {
    request.context.traceId = newTraceId();
    logger.appendKeys({ trace_id: request.context.traceId });
  },
});
