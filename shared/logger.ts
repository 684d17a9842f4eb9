import { Logger } from '@aws-lambda-powertools/logger';

/** One structured logger for every function; the trace id is appended per request. */
export const logger = new Logger({ serviceName: 'merchant-api' });
