import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '#local/apigw';
import { enableInvocationScopes, invokeScoped } from '#local/invocation-scope';

/**
 * Every handler of a local stage shares one Powertools Logger; each invocation must still log under
 * its own function name, even while other invocations run (commission lines
 * must never be tagged with the name of a route that happened to run alongside).
 */

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

const loggedFunctionNames = (write: { mock: { calls: unknown[][] } }) =>
  write.mock.calls
    .map(([line]): { message: string; function_name?: string } | undefined => {
      try {
        return JSON.parse(String(line)) as { message: string; function_name?: string };
      } catch {
        return undefined;
      }
    })
    .filter((entry) => entry?.message.startsWith('step'))
    .map((entry) => `${entry?.message}:${entry?.function_name}`);

describe('local invocation scopes', () => {
  afterEach(() => vi.restoreAllMocks());

  it('tags every log line with the function of its own invocation while two run at once', async () => {
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
    vi.stubEnv('AWS_LAMBDA_MAX_CONCURRENCY', '64');
    enableInvocationScopes();
    const logger = new Logger({ serviceName: 'scope-test' });
    const handler = middy(async (_event: unknown, context: { functionName: string }) => {
      logger.info(`step 1 ${context.functionName}`);
      await tick();
      logger.info(`step 2 ${context.functionName}`);
      await tick();
      logger.info(`step 3 ${context.functionName}`);
    }).use(injectLambdaContext(logger, { resetKeys: true }));
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);

    const run = (name: string) => {
      const context = lambdaContext(name);
      return invokeScoped(context, () => handler({}, context));
    };
    await Promise.all([run('commissions-process'), run('orders-create-legacy'), run('follow-ups')]);

    const lines = loggedFunctionNames(write);
    write.mockRestore();
    vi.unstubAllEnvs();
    expect(lines).toHaveLength(9);
    for (const line of lines) {
      const [message, functionName] = line.split(':');
      expect(message?.endsWith(functionName ?? '')).toBe(true);
    }
  });
});
