import * as z from 'zod/mini';
import { cursorParam, pageQueryShape, pageRefused } from '#shared/http/pagination';
import { WEBHOOK_EVENT_TYPES } from '#shared/webhooks/events';
import { MAX_URL_LENGTH, targetPolicyFromEnv, urlRefusal } from '#shared/webhooks/outbound';
import { optionalString, refuse, text, uuidText } from './common';

/** The most endpoints a merchant has (the transaction that creates one holds it). */
export const MAX_WEBHOOK_ENDPOINTS = 20;

export const WEBHOOK_MESSAGES = {
  tooMany: `A merchant can have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints.`,
  disabled: 'The endpoint is disabled: enable it before sending its deliveries again.',
} as const;

/** How far back a recovery reaches (deliveries are kept 15 days). */
export const RECOVER_MAX_DAYS = 14;

const policy = targetPolicyFromEnv();

/** A webhook URL this stage can deliver to (https to a public address; `npm start` also http://localhost). */
const webhookUrl = () =>
  z.pipe(
    text().check(z.trim(), z.minLength(1), z.maxLength(MAX_URL_LENGTH)),
    z.transform((url, ctx) => {
      const refusal = urlRefusal(url, policy);
      return refusal === undefined ? url : refuse(ctx, url, refusal);
    }),
  );

/** The event types to deliver: unique, known; empty or absent means every type. */
const eventFilter = () =>
  z.pipe(
    z.array(z.enum(WEBHOOK_EVENT_TYPES)).check(z.maxLength(WEBHOOK_EVENT_TYPES.length)),
    z.transform((events) => [...new Set(events)]),
  );

/** Only these fields make an endpoint; any other (a `secret` or `uuid` of the caller's) is refused by name, as on an update. */
export const webhookCreateBody = z.strictObject({
  url: webhookUrl(),
  events: z.optional(eventFilter()),
  description: optionalString(),
  enabled: z.optional(z.boolean()),
});
export type WebhookCreateInput = z.output<typeof webhookCreateBody>;

export const webhookUpdateBody = z.strictObject({ ...webhookCreateBody.shape, url: z.optional(webhookUrl()) });
export type WebhookUpdateInput = z.output<typeof webhookUpdateBody>;

export const webhookDeliveriesQuery = z.object({
  per_page: pageQueryShape.per_page,
  /** The `next_cursor` of the previous page (opaque, bound to this endpoint's list). */
  cursor: cursorParam(),
  page: pageRefused('cursor'),
});

export const deliveryParams = z.object({ uuid: uuidText(), id: text().check(z.minLength(1), z.maxLength(200)) });

/** The earliest `since` a recovery takes, and its default. */
export const recoverableSince = (now = Date.now()) => new Date(now - RECOVER_MAX_DAYS * 24 * 3600 * 1000).toISOString();

export const webhookRecoverBody = z.object({
  /** Resend what failed since this time (ISO 8601), at most 14 days back; absent: 14 days back. */
  since: z.optional(
    z.pipe(
      text().check(z.iso.datetime({ offset: true })),
      z.transform((since, ctx) => {
        const at = Date.parse(since);
        const within = at >= Date.parse(recoverableSince()) && at <= Date.now();
        return within ? new Date(at).toISOString() : refuse(ctx, since, `The :attribute must be within the last ${RECOVER_MAX_DAYS} days.`);
      }),
    ),
  ),
});
