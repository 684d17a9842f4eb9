import type { SQSRecord } from 'aws-lambda';
import { applyOrderChanges, type LedgerOutcome, PermanentMessageError } from '#shared/domain/commissions';
import { parseOrderEvent } from '#shared/domain/order-events';
import { asError, errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { countMetric, emitMetrics, METRIC } from '#shared/metrics';
import { AmountNotComputableError } from '#shared/money';
import { sqsBatchHandler } from '#shared/queue/batch-handler';
import { requireQueueUrl } from '#shared/queue/client';
import { sendToDeadLetterQueue } from '#shared/queue/dead-letter';

const FUNCTION_ID = 'commissions-process';
const ORDERS_DLQ_URL = requireQueueUrl('orders-dlq');

const isPermanentFailure = (error: unknown) => error instanceof PermanentMessageError || error instanceof AmountNotComputableError;

const processRecord = async (record: SQSRecord) => {
  const message = parseOrderEvent(record.body);
  if (!message) throw new PermanentMessageError('Not an order event message');
  const { outcome, ledger, booked } = await applyOrderChanges(message.merchant_id, message.order_uuid, message.version);
  if (booked.some((entry) => entry.type === 'accrual')) countMetric(METRIC.commissionsRecorded);
  if (ledger && booked.some((entry) => entry.type === 'accrual' || entry.type === 'reversal')) {
    emitMetrics({ [METRIC.commissionAmount]: booked.reduce((sum, entry) => sum + entry.amount, 0) }, { currency: ledger.currency_code });
  }
  logger.debug(
    outcome === 'applied'
      ? 'Commission ledger brought up to the order'
      : 'Duplicate or late message: the ledger already reflects the order',
    {
      message_id: record.messageId,
      merchant_id: message.merchant_id,
      order_uuid: message.order_uuid,
      event: message.type,
      event_version: message.version,
      applied_version: ledger?.applied_version,
      status: ledger?.status,
      net_amount: ledger?.net_amount,
      booked: booked.map((entry) => entry.type),
    },
  );
  return { outcome, orderUuid: message.order_uuid };
};

/** One line per batch: how many ledgers moved, and the orders whose message changed nothing (each record in detail at DEBUG). */
const summarize = (processed: { outcome: LedgerOutcome['outcome']; orderUuid: string }[]) => {
  const duplicates = processed.filter((done) => done.outcome === 'duplicate').map((done) => done.orderUuid);
  if (processed.length === 0) return;
  logger.info('Commission ledgers brought up to their orders', {
    applied: processed.length - duplicates.length,
    duplicate: duplicates.length,
    ...(duplicates.length > 0 && { duplicate_orders: duplicates }),
  });
};

/** Settles one failed record: true when it is acknowledged (moved to the DLQ), false when SQS should redeliver it. */
const settleFailure = async (record: SQSRecord, error: Error): Promise<boolean> => {
  const about = {
    message_id: record.messageId,
    receive_count: record.attributes?.ApproximateReceiveCount,
    error: { name: error.name, message: error.message },
  };
  if (!isPermanentFailure(error)) {
    logger.error('Message not processed; SQS will redeliver it', about);
    return false;
  }
  try {
    await sendToDeadLetterQueue(
      ORDERS_DLQ_URL,
      { body: record.body, id: record.messageId, receiveCount: record.attributes?.ApproximateReceiveCount },
      error,
      FUNCTION_ID,
    );
    logger.error('Message can never succeed: moved to the dead-letter queue', { ...about, dead_letter_reason: error.message });
    return true;
  } catch (dlqError) {
    logger.error('Message can never succeed, but the dead-letter queue refused it; SQS will redeliver it', {
      ...about,
      dead_letter_error: { name: errorName(dlqError), message: asError(dlqError).message },
    });
    return false;
  }
};

/** The commission consumer: each message brings its order's ledger up to the order (docs/architecture.md#commission-processing). */
export const handler = sqsBatchHandler(processRecord, settleFailure, summarize);
