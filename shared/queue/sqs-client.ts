import { SQSClient } from '@aws-sdk/client-sqs';
import { instrumentClient } from '#shared/aws-clients';
import { FUNCTION_CLIENT_CONFIG } from '#shared/sdk-timeouts';

/**
 * The functions' SQS client, without any queue URL (client.ts and dead-letter.ts add theirs, each
 * required at init only where it is used). useQueueUrlAsEndpoint=false: requests go to the configured
 * SQS endpoint rather than the host inside the queue URL, which emulators set to names that need not
 * resolve. Timeouts: shared/sdk-timeouts.ts.
 */
export const sqs = instrumentClient('sqs', new SQSClient({ ...FUNCTION_CLIENT_CONFIG.sqs, useQueueUrlAsEndpoint: false }));
