import { SESClient } from '@aws-sdk/client-ses';
import { requireEnv } from '../config';
import { FUNCTION_CLIENT_CONFIG } from '../sdk-timeouts';

/** The verified SES identity every e-mail is sent from. */
export const MAIL_FROM = requireEnv('MAIL_FROM');

/** With the functions' timeouts (shared/sdk-timeouts.ts): a hung SES fails the send, never the request. */
export const ses = new SESClient(FUNCTION_CLIENT_CONFIG.ses);
