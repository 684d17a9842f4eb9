import { merchantUsers } from '#shared/db/entities/user';
import type { WebhookEndpointItem } from '#shared/db/entities/webhook-endpoint';
import type { TableRef } from '#shared/db/table-def';
import { errorName } from '#shared/errors';
import { logger } from '#shared/logger';
import { htmlOf, type MailMessage } from '#shared/mail/messages';
import { sendMail } from '#shared/mail/send';

/** How many of the merchant's dashboard users are told (the first ones; a merchant has a handful). */
const MAX_RECIPIENTS = 10;

export type EndpointNotice = { kind: 'failing'; failures: number } | { kind: 'disabled'; reason: string };

const endpointNoticeMessage = (to: string, endpoint: Pick<WebhookEndpointItem, 'url' | 'uuid'>, notice: EndpointNotice): MailMessage => {
  const paragraphs =
    notice.kind === 'failing'
      ? [
          `Deliveries to your webhook endpoint ${endpoint.url} (${endpoint.uuid}) have failed ${notice.failures} times in a row.`,
          'We keep retrying each event for about three days. The endpoint is disabled after 5 days of failures in a row.',
        ]
      : [
          `Your webhook endpoint ${endpoint.url} (${endpoint.uuid}) has been disabled: ${notice.reason}.`,
          'Fix the receiver, enable the endpoint again (PATCH /api/v2/webhooks/{uuid} with "enabled": true), then recover what it missed (POST /api/v2/webhooks/{uuid}/recover).',
        ];
  return {
    to,
    subject: notice.kind === 'failing' ? 'Your webhook endpoint is failing' : 'Your webhook endpoint was disabled',
    text: `${paragraphs.join('\n\n')}\n`,
    html: htmlOf(paragraphs),
  };
};

/** E-mails the merchant's users about an endpoint's failure streak or disabling; best effort (the endpoint's state says the same). */
export const sendEndpointNotice = async (db: TableRef, merchantId: string, endpoint: WebhookEndpointItem, notice: EndpointNotice) => {
  const users = await merchantUsers(db, merchantId, MAX_RECIPIENTS);
  await Promise.all(
    users.map((user) =>
      sendMail(endpointNoticeMessage(user.email, endpoint, notice)).catch((error: unknown) => {
        logger.warn('Webhook endpoint notice not sent', {
          merchant_id: merchantId,
          endpoint_uuid: endpoint.uuid,
          error_name: errorName(error),
        });
      }),
    ),
  );
};
