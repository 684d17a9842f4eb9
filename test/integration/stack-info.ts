import type { Stage } from '#shared/config';
import type { QueueId } from '#shared/db/table-def';

export type StackInfo = {
  endpoints: { dynamodb: string; sqs: string; ses: string };
  stages: Record<
    Stage,
    { url: string; table: string; streamArn: string; queueUrls: Record<QueueId, string>; ordersQueueUrl: string; dlqUrl: string }
  >;
};

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}
