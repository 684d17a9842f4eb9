import { SESClient } from '@aws-sdk/client-ses';
import { instrumentClient } from '#shared/aws-clients';
import { requireEnv } from '#shared/config';
import { FUNCTION_CLIENT_CONFIG } from '#shared/sdk-timeouts';

/** The verified SES identity every e-mail is sent from. */
export const MAIL_FROM = requireEnv('MAIL_FROM');

const newClient = () => instrumentClient('ses', new SESClient(FUNCTION_CLIENT_CONFIG.ses));

/** With the functions' timeouts (shared/sdk-timeouts.ts): a hung SES fails the send, never the request. */
export let ses = newClient();

/** A fresh client after a send failed inside the SDK, which can leave half a request that corrupts the next e-mail. */
export const renewSesClient = () => {
  ses.destroy();
  ses = newClient();
};
