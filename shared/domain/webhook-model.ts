import type { WebhookDeliveryItem } from '#shared/db/entities/webhook-delivery';
import type { WebhookEndpointItem } from '#shared/db/entities/webhook-endpoint';
import type { SubscribableEventType } from '#shared/webhooks/events';
import { pick } from './program-model';

/** How the API and the admin CLI show webhook endpoints and deliveries (never their secrets). */
export const toWebhookResponse = (endpoint: WebhookEndpointItem) => ({
  ...pick(endpoint, ['uuid', 'url', 'description']),
  // Validated against the event types on the way in (shared/schemas/webhooks.ts).
  events: endpoint.events as SubscribableEventType[],
  ...pick(endpoint, ['enabled', 'disabled_reason']),
  failing_since: endpoint.failing_since ?? null,
  ...pick(endpoint, ['created_at', 'updated_at']),
});

export const toDeliveryResponse = (delivery: WebhookDeliveryItem) => ({
  ...pick(delivery, ['event_id', 'event_type', 'status']),
  attempt: delivery.attempts,
  ...pick(delivery, ['response_status', 'latency_ms', 'response_body', 'error', 'next_attempt_at', 'last_attempt_at', 'created_at']),
});
