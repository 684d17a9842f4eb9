import { route } from '#functions/routes';
import { rotateWebhookSecretOf } from '#shared/domain/webhooks';
import { postApiHandler } from '#shared/http/post-api-handler';
import { uuidParams } from '#shared/schemas/common';
import { secretBox } from '#shared/webhooks/secret-box';

/** The new `secret`, shown this once; the previous one signs beside it until `previous_secret_expires_at`. */
export const handler = postApiHandler(
  route('webhooks-rotate-secret'),
  { params: uuidParams },
  async ({ merchant, params }) => ({
    data: { webhook: await rotateWebhookSecretOf(merchant.id, params.uuid) },
  }),
  { secrets: { fields: [['data', 'webhook', 'secret']], box: secretBox } },
);
