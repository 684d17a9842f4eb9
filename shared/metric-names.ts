/** The business metrics' names, shared by shared/metrics.ts and the dashboard and alarms; every point has `service` and `stage`. */
export const METRICS_NAMESPACE = 'AffiliateMerchantApi';
export const METRICS_SERVICE = 'merchant-api';

export const METRIC = {
  /** An order was accepted: counted by the change feed as it announces the new order (per batch, so a re-read batch may count twice). */
  ordersAccepted: 'OrdersAccepted',
  /** An order was cancelled. */
  ordersCancelled: 'OrdersCancelled',
  /** A commission was accrued on an order's ledger (duplicates not counted). */
  commissionsRecorded: 'CommissionsRecorded',
  /** Sum of accrued (positive) and reversed (negative) commission amounts in minor units, per `currency` dimension. */
  commissionAmount: 'CommissionAmount',
  /** An affiliate-program e-mail SES accepted / refused. */
  emailsSent: 'EmailsSent',
  emailsFailed: 'EmailsFailed',
  /** A webhook delivery attempt the receiver answered with a 2xx / anything else (or no answer). */
  webhookDeliveries: 'WebhookDeliveries',
  webhookFailures: 'WebhookFailures',
  /** Milliseconds from sending a webhook delivery to its answer (or its failure). */
  webhookLatency: 'WebhookLatency',
  /** A request refused by its merchant's quota (429), with the dimension `merchant`. */
  quotaRefusals: 'QuotaRefusals',
  /** The service disabled a webhook endpoint (410 Gone, a failure streak). */
  webhookEndpointsDisabled: 'WebhookEndpointsDisabled',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
