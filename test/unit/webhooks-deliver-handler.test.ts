import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler } from '#functions/webhooks/deliver';
import { logger } from '#shared/logger';
import { deliver } from '#shared/webhooks/deliver';
import { workerContext } from './support/api';
import { MERCHANT } from './support/fixtures';

/** The deliverer's handler: what it logs of each delivery (the work itself: webhooks-deliver.test.ts). */
vi.mock('#shared/webhooks/deliver', () => ({ deliver: vi.fn() }));

const body = JSON.stringify({
  merchant_id: MERCHANT.id,
  endpoint_uuid: '3f0c2b1a-4d5e-4f60-8a9b-0c1d2e3f4a5b',
  event: { id: 'evt_1', type: 'order.created', timestamp: '2026-11-25T12:00:00.000Z', data: {} },
  attempt: 2,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the deliverer handler', () => {
  it.each([
    ['delivered', 'debug'],
    ['retrying', 'info'],
    ['failed', 'info'],
  ] as const)('logs a %s delivery at %s (a delivery is in the endpoint log already)', async (outcome, level) => {
    // Prepare
    vi.mocked(deliver).mockResolvedValue(outcome);
    const info = vi.spyOn(logger, 'info');
    const debug = vi.spyOn(logger, 'debug');

    // Act
    const response = await handler({ Records: [{ messageId: 'm-1', body }] } as never, workerContext('webhooks-deliver'));

    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    const logged = { info: info.mock.calls, debug: debug.mock.calls };
    expect(logged[level]).toEqual([['Webhook delivery', { outcome, endpoint_uuid: expect.any(String), event_id: 'evt_1', attempt: 2 }]]);
    expect(logged[level === 'info' ? 'debug' : 'info']).toEqual([]);
  });
});
