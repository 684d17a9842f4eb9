import { route } from '#functions/routes';
import { createWebhook } from '#shared/domain/webhooks';
import { postApiHandler } from '#shared/http/post-api-handler';
import { webhookCreateBody } from '#shared/schemas/webhooks';
import { secretBox } from '#shared/webhooks/secret-box';

/** 201 with data.webhook, its `secret` shown this once (an Idempotency-Key record keeps it sealed). */
export const handler = postApiHandler(
  route('webhooks-create'),
  { body: webhookCreateBody },
  async ({ merchant, body, identity }) => ({
    data: { webhook: await createWebhook(merchant.id, body, identity) },
  }),
  { secrets: { fields: [['data', 'webhook', 'secret']], box: secretBox } },
);
