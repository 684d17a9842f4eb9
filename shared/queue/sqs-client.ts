import { SQSClient } from '@aws-sdk/client-sqs';
import { instrumentClient } from '#shared/aws-clients';
import { FUNCTION_CLIENT_CONFIG } from '#shared/sdk-timeouts';

/**
 * The functions' SQS client. useQueueUrlAsEndpoint=false: requests go to the configured endpoint rather than the
 * host inside the queue URL, which emulators set to names that need not resolve.
 */
export const sqs = instrumentClient('sqs', new SQSClient({ ...FUNCTION_CLIENT_CONFIG.sqs, useQueueUrlAsEndpoint: false }));
