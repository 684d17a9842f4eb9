/** The business metrics' names (shared/metrics.ts, the dashboard, the alarms); what each counts: lib/README.md#metrics-and-tracing. */
export const METRICS_NAMESPACE = 'AffiliateMerchantApi';
export const METRICS_SERVICE = 'merchant-api';

export const METRIC = {
  ordersAccepted: 'OrdersAccepted',
  ordersCancelled: 'OrdersCancelled',
  commissionsRecorded: 'CommissionsRecorded',
  commissionAmount: 'CommissionAmount',
  emailsSent: 'EmailsSent',
  emailsFailed: 'EmailsFailed',
  webhookDeliveries: 'WebhookDeliveries',
  webhookFailures: 'WebhookFailures',
  webhookLatency: 'WebhookLatency',
  quotaRefusals: 'QuotaRefusals',
  webhookEndpointsDisabled: 'WebhookEndpointsDisabled',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];
