import { SQSClient } from '@aws-sdk/client-sqs';
import { requireEnv } from '../config';
import { traceAwsClient } from '../tracing';

export const ORDERS_QUEUE_URL = requireEnv('ORDERS_QUEUE_URL');

/**
 * useQueueUrlAsEndpoint=false: requests go to the configured SQS endpoint (AWS's regional one, or
 * AWS_ENDPOINT_URL_SQS locally) rather than the host inside the queue URL, which emulators set to
 * names that need not resolve.
 */
export const sqs = traceAwsClient(new SQSClient({ useQueueUrlAsEndpoint: false }));
