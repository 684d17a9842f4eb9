import { SESClient, SendEmailCommand } from '@aws-sdk/client-ses';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handler as processCommissions } from '#functions/commissions/process';
import { handler as cancelHandler } from '#functions/orders/cancel';
import { handler as createHandler } from '#functions/orders/create';
import { handler as createLegacyHandler } from '#functions/orders/create-legacy';
import type { OrderItem } from '#shared/db/entities/order';
import { applyOrderChanges, type CommissionLedger } from '#shared/domain/commissions';
import { cancelOrder, createOrder } from '#shared/domain/orders';
import { deliverNotification } from '#shared/mail/send';
import { metrics } from '#shared/metrics';
import { apiEvent, invoke, workerContext } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';
import { MERCHANT, ORDER_UUID, orderBody, storedOrder, stubAuth, TOKENS } from './support/fixtures';

/**
 * The business metrics (shared/metrics.ts): what each function counts, and the EMF line CloudWatch
 * reads. The data layer is stubbed at the domain functions, so these tests say what is counted
 * when, whatever the writes behind it are.
 */
vi.mock('#shared/domain/orders', async (importOriginal) => ({
  ...(await importOriginal<typeof import('#shared/domain/orders')>()),
  createOrder: vi.fn(),
  cancelOrder: vi.fn(),
}));
vi.mock('#shared/domain/commissions', async (importOriginal) => ({
  ...(await importOriginal<typeof import('#shared/domain/commissions')>()),
  applyOrderChanges: vi.fn(),
}));

const sesMock = mockClient(SESClient);

/** Every data point added, as `name=value unit`, in order. */
const points = () => vi.mocked(metrics.addMetric).mock.calls.map(([name, unit, value]) => `${name}=${value} ${unit}`);

beforeEach(() => {
  resetAwsMocks();
  sesMock.reset();
  stubAuth();
  vi.spyOn(metrics, 'addMetric');
  vi.spyOn(metrics, 'publishStoredMetrics');
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

describe('orders', () => {
  it('publishes nothing on a 201 of either create endpoint: the change feed counts the orders it announces, per batch', async () => {
    // Prepare
    vi.mocked(createOrder).mockResolvedValue(storedOrder() as unknown as OrderItem);

    // Act
    const v2 = await invoke(createHandler, apiEvent('orders-create', { token: TOKENS.live, body: orderBody() }));
    const legacy = await invoke(createLegacyHandler, apiEvent('orders-create-legacy', { token: TOKENS.live, body: orderBody() }));

    // Assess
    expect([v2.statusCode, legacy.statusCode]).toEqual([201, 201]);
    expect(points()).toEqual([]);
    expect(metrics.publishStoredMetrics).not.toHaveBeenCalled();
  });

  it('counts nothing for a refused order', async () => {
    // Act
    const response = await invoke(createHandler, apiEvent('orders-create', { token: TOKENS.live, body: {} }));

    // Assess
    expect(response.statusCode).toBe(422);
    expect(points()).toEqual([]);
  });

  it('counts a cancelled order', async () => {
    // Prepare
    vi.mocked(cancelOrder).mockResolvedValue(storedOrder({ cancelled_at: '2026-03-31T12:00:00.000Z' }) as unknown as OrderItem);

    // Act
    const response = await invoke(cancelHandler, apiEvent('orders-cancel', { token: TOKENS.live, pathParameters: { uuid: ORDER_UUID } }));

    // Assess
    expect(response.statusCode).toBe(200);
    expect(points()).toEqual(['OrdersCancelled=1 Count']);
  });
});

describe('commissions', () => {
  const message = (id: string) => ({
    messageId: id,
    body: JSON.stringify({ type: 'order.created', merchant_id: MERCHANT.id, order_uuid: ORDER_UUID }),
    attributes: { ApproximateReceiveCount: '1' },
  });
  const ledger = { currency_code: 'EUR', applied_version: 1 } as CommissionLedger;
  const at = '2026-03-31T12:00:00.000Z';

  it('counts each accrued commission and its amount per currency; a duplicate counts nothing', async () => {
    // Prepare
    vi.mocked(applyOrderChanges)
      .mockResolvedValueOnce({ outcome: 'applied', ledger, booked: [{ type: 'accrual', amount: 2500, at, version: 1 }] })
      .mockResolvedValueOnce({ outcome: 'duplicate', ledger, booked: [] });
    vi.spyOn(metrics, 'addDimensions');

    // Act
    await processCommissions(
      { Records: [message('m-1'), message('m-2')] } as unknown as SQSEvent,
      workerContext('commissions-process') as never,
    );

    // Assess
    expect(points()).toEqual(['CommissionsRecorded=1 Count', 'CommissionAmount=2500 None']);
    expect(metrics.addDimensions).toHaveBeenCalledWith({ currency: 'EUR' });
  });

  it('reports a reversal as a negative amount and counts no new commission', async () => {
    // Prepare
    vi.mocked(applyOrderChanges).mockResolvedValueOnce({
      outcome: 'applied',
      ledger,
      booked: [{ type: 'reversal', amount: -2500, at, version: 2 }],
    });

    // Act
    await processCommissions({ Records: [message('m-1')] } as unknown as SQSEvent, workerContext('commissions-process') as never);

    // Assess
    expect(points()).toEqual(['CommissionAmount=-2500 None']);
  });
});

describe('e-mails', () => {
  const key = { pk: `M#${MERCHANT.id}`, sk: 'INVITE#1' };
  const mail = { to: 'erin@example.com', subject: 'Invitation', text: 'Join', html: '<p>Join</p>' };

  it('counts an e-mail SES took as sent and one it refused as failed', async () => {
    // Prepare
    ddbMock.on(UpdateCommand).resolves({});
    sesMock
      .on(SendEmailCommand)
      .resolvesOnce({ MessageId: 'm-1' })
      .rejectsOnce(Object.assign(new Error('Throttling'), { name: 'Throttling' }));

    // Act
    await deliverNotification(key, mail, { notification: 'invite', uuid: '1' });
    await deliverNotification(key, mail, { notification: 'invite', uuid: '1' });

    // Assess
    expect(points()).toEqual(['EmailsSent=1 Count', 'EmailsFailed=1 Count']);
  });
});

describe('the EMF line', () => {
  /** A fresh metrics module, configured as in Lambda, and the lines it writes to stdout. */
  const metricsAsInLambda = async () => {
    vi.resetModules();
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    const fresh = await import('#shared/metrics');
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    return { fresh, lines };
  };

  it('names the namespace, the service and stage dimensions (plus any added) and the values, in one stdout line', async () => {
    // Prepare
    vi.stubEnv('STAGE', 'sandbox');
    const { fresh, lines } = await metricsAsInLambda();

    // Act
    fresh.emitMetrics({ [fresh.METRIC.commissionAmount]: 2500 }, { currency: 'EUR' });

    // Assess
    expect(lines).toHaveLength(1);
    const emf = JSON.parse(lines[0] ?? '');
    expect(emf._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: 'AffiliateMerchantApi',
        Dimensions: [['service', 'stage', 'currency']],
        Metrics: [{ Name: 'CommissionAmount', Unit: 'None' }],
      },
    ]);
    expect(emf).toMatchObject({ service: 'merchant-api', stage: 'sandbox', currency: 'EUR', CommissionAmount: 2500 });
  });

  it("holds a batch's points to its end: one line per set of dimensions, every value kept, also when the batch throws", async () => {
    // Prepare
    const { fresh, lines } = await metricsAsInLambda();
    const record = (amount: number, currency: string) => {
      fresh.countMetric(fresh.METRIC.commissionsRecorded);
      fresh.emitMetrics({ [fresh.METRIC.commissionAmount]: amount }, { currency });
    };

    // Act
    await fresh.withBatchedMetrics(async () => {
      record(2500, 'EUR');
      record(100, 'USD');
      record(-700, 'EUR');
      expect(lines).toEqual([]);
    });
    const throwing = fresh.withBatchedMetrics(async () => {
      record(1, 'EUR');
      throw new Error('batch failed');
    });

    // Assess
    await expect(throwing).rejects.toThrow('batch failed');
    const emf = lines.map((line) => JSON.parse(line));
    expect(emf.map(({ _aws, ...rest }) => rest)).toEqual([
      expect.objectContaining({ CommissionsRecorded: [1, 1, 1] }),
      expect.objectContaining({ currency: 'EUR', CommissionAmount: [2500, -700] }),
      expect.objectContaining({ currency: 'USD', CommissionAmount: 100 }),
      expect.objectContaining({ CommissionsRecorded: 1 }),
      expect.objectContaining({ currency: 'EUR', CommissionAmount: 1 }),
    ]);
    expect(emf[0]).not.toHaveProperty('currency');
  });

  it('publishes what a batch holds by the time it is given (before the timeout, which runs no finally), the rest at its end', async () => {
    // Prepare
    vi.useFakeTimers();
    const { fresh, lines } = await metricsAsInLambda();
    let finish = () => {};

    // Act
    const batch = fresh.withBatchedMetrics(async () => {
      fresh.countMetric(fresh.METRIC.webhookDeliveries);
      await new Promise<void>((resolve) => {
        finish = resolve;
      });
      fresh.countMetric(fresh.METRIC.webhookFailures);
    }, Date.now() + 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    const byThen = lines.length;
    finish();
    await batch;

    // Assess
    expect(byThen).toBe(1);
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ WebhookDeliveries: 1 }),
      expect.objectContaining({ WebhookFailures: 1 }),
    ]);
  });
});
