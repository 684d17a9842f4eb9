import { SESClient } from '@aws-sdk/client-ses';
import { requireEnv } from '../config';
import { traceAwsClient } from '../tracing';

/** The verified SES identity every e-mail is sent from. */
export const MAIL_FROM = requireEnv('MAIL_FROM');

export const ses = traceAwsClient(new SESClient({}));
