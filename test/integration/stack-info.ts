import type { Stage } from '#shared/config';

export type StackInfo = {
  endpoints: { dynamodb: string; sqs: string; ses: string };
  stages: Record<Stage, { url: string; table: string; ordersQueueUrl: string; dlqUrl: string }>;
};

declare module 'vitest' {
  export interface ProvidedContext {
    stack: StackInfo;
  }
}
