import { SQSClient } from '@aws-sdk/client-sqs';
import { instrumentClient } from '#shared/aws-clients';
import { FUNCTION_CLIENT_CONFIG } from '#shared/sdk-timeouts';

/** The functions' SQS client, sending to the configured endpoint, not the queue URL's host (emulators' need not resolve). */
export const sqs = instrumentClient('sqs', new SQSClient({ ...FUNCTION_CLIENT_CONFIG.sqs, useQueueUrlAsEndpoint: false }));
