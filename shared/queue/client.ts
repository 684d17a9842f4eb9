import { requireEnv } from '#shared/config';
import { QUEUES, type QueueId } from '#shared/db/table-def';

/** A queue's URL from the function's environment (lib/function-specs.ts gives it to the senders only). Call at init: fail fast. */
export const requireQueueUrl = (queue: QueueId): string => requireEnv(QUEUES[queue].envVar);

/** A queue's URL read from the environment on first use: for modules that operator tools import without the queue. */
export const lazyQueueUrl = (queue: QueueId): (() => string) => {
  let url: string | undefined;
  return () => {
    url ??= requireQueueUrl(queue);
    return url;
  };
};
