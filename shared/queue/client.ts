import { requireEnv } from '#shared/config';
import { QUEUES, type QueueId } from '#shared/db/table-def';

export { sqs } from './sqs-client';

/** A queue's URL from the function's environment (lib/function-specs.ts gives it to the senders only). Call at init: fail fast. */
export const requireQueueUrl = (queue: QueueId): string => requireEnv(QUEUES[queue].envVar);
