import { SESClient } from '@aws-sdk/client-ses';
import { requireEnv } from '../config';

/** The verified SES identity every e-mail is sent from. */
export const MAIL_FROM = requireEnv('MAIL_FROM');

export const ses = new SESClient({});
