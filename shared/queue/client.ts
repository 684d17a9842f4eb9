import { requireEnv } from '#shared/config';

export { sqs } from './sqs-client';

/** The stage's orders queue, for the functions that send to it. Read at init: fail fast. */
export const ORDERS_QUEUE_URL = requireEnv('ORDERS_QUEUE_URL');
