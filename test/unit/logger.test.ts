import { afterEach, describe, expect, it, vi } from 'vitest';
import { logger } from '#shared/logger';
import { lambdaContext } from './support/api';

/** The line the functions' logger writes for `logger.info('done', { orders: 2 })` in an invocation. */
const oneLine = () => {
  vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
  logger.setLogLevel('INFO');
  logger.addContext(lambdaContext('merchant-api-live-CommissionsProcess4F2A1B3C-AbCdEfGhIjKl'));
  const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  logger.info('done', { orders: 2 });
  const [line] = write.mock.calls.map(([text]) => String(text));
  write.mockRestore();
  return JSON.parse(line ?? '{}') as Record<string, unknown>;
};

describe('the functions log line', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    logger.setLogLevel('SILENT');
  });

  it('in Lambda, keeps what finds the request and leaves out what the log group already says', () => {
    // Prepare
    vi.stubEnv('AWS_LAMBDA_LOG_GROUP_NAME', '/aws/lambda/merchant-api-live-CommissionsProcess4F2A1B3C-AbCdEfGhIjKl');

    // Act
    const line = oneLine();

    // Assess
    expect(Object.keys(line).sort()).toEqual(
      ['cold_start', 'function_request_id', 'level', 'message', 'orders', 'service', 'timestamp', 'xray_trace_id'].sort(),
    );
    expect(line).toMatchObject({ level: 'INFO', message: 'done', orders: 2, xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793' });
  });

  it('without a log group of its own (the local stack), names its function', () => {
    // Prepare
    vi.stubEnv('AWS_LAMBDA_LOG_GROUP_NAME', '');

    // Act
    const line = oneLine();

    // Assess
    expect(line.function_name).toBe('merchant-api-live-CommissionsProcess4F2A1B3C-AbCdEfGhIjKl');
    expect(line).not.toHaveProperty('function_arn');
  });
});
