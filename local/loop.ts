import type { Context } from 'aws-lambda';
import { asError } from '#shared/errors';
import { lambdaContext } from './apigw';
import { invokeScoped } from './invocation-scope';

/** What the local event source mappings (local/sqs-poller.ts, local/stream-poller.ts) share: their polling loop and their invocation. */

/** The loop's pause after a round that failed. */
const ERROR_BACKOFF_MS = 2000;

/** Runs `round` again after the milliseconds it returns (ERROR_BACKOFF_MS when it throws); `stop` cuts the pause and `interrupt`s, then awaits the round. */
export const pollingLoop = (round: () => Promise<number>, onError: (error: Error) => void, interrupt = () => {}) => {
  let loop: Promise<void> | undefined;
  let stopping = false;
  let wake = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const run = async () => {
    while (!stopping) {
      let delay: number;
      try {
        delay = await round();
      } catch (error) {
        if (stopping) break;
        onError(asError(error));
        delay = ERROR_BACKOFF_MS;
      }
      if (!stopping && delay > 0) await pause(delay);
    }
  };
  return {
    start: () => {
      if (loop) return;
      stopping = false;
      loop = run();
    },
    stop: async () => {
      stopping = true;
      interrupt();
      wake();
      await loop;
      loop = undefined;
    },
  };
};

/** What an invocation gave: the handler's answer as it came (not trusted to be well formed), or what it threw. */
export type InvocationOutcome = { response: unknown } | { error: unknown };

/** One invocation of a function's handler with a batch, in its own scope, as Lambda makes it: its context and outcome. */
export const invokeWith = async <E>(
  handler: (event: E, context: Context) => Promise<unknown>,
  event: E,
  functionName: string,
  timeoutSeconds: number | undefined,
): Promise<{ context: Context; outcome: InvocationOutcome }> => {
  const context = lambdaContext(functionName, timeoutSeconds);
  try {
    return { context, outcome: { response: await invokeScoped(context, () => handler(event, context)) } };
  } catch (error) {
    return { context, outcome: { error } };
  }
};
