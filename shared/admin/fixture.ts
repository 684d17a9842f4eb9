import * as z from 'zod/mini';
import { MAX_SEGMENTS } from '#shared/db/entities/segment';
import { MAX_TIERS } from '#shared/db/entities/tier';
import { orderCreateBody } from '#shared/schemas/order';

/** The seed fixture format of DESIGN.md. Besides it, optional fixed ids/values (used by the demo). */
const isoTimestamp = z.iso.datetime({ offset: true });

export const fixtureSchema = z.object({
  merchants: z.array(
    z.object({
      key: z.string(),
      id: z.optional(z.uuid()),
      name: z.string(),
      currency: z.string().check(z.length(3)),
      users: z.optional(z.array(z.object({ email: z.email(), name: z.optional(z.string()) }))),
      tokens: z.optional(
        z.array(
          z.object({
            key: z.string(),
            kind: z.optional(z.enum(['live', 'testing'])),
            can_place_live_orders: z.optional(z.boolean()),
            /** A fixed token string (the demo's, so events/ can use it); minted when absent. */
            value: z.optional(z.string().check(z.regex(/^(live|test)_[A-Za-z0-9_-]{32,}$/))),
          }),
        ),
      ),
      tiers: z.optional(
        z
          .array(z.object({ slug: z.string(), name: z.string(), description: z.optional(z.string()), default: z.optional(z.boolean()) }))
          .check(z.maxLength(MAX_TIERS)),
      ),
      segments: z.optional(
        z
          .array(
            z.object({
              key: z.string(),
              uuid: z.optional(z.uuid()),
              name: z.string(),
              description: z.optional(z.string()),
              default: z.optional(z.boolean()),
              type: z.optional(z.literal('percentage')),
              slugs: z.optional(z.array(z.string())),
              skus: z.optional(z.array(z.string())),
              rates: z.optional(z.record(z.string(), z.number())),
            }),
          )
          .check(z.maxLength(MAX_SEGMENTS)),
      ),
      affiliates: z.optional(
        z.array(
          z.object({
            slug: z.string(),
            name: z.string(),
            email: z.email(),
            tier: z.optional(z.string()),
            status: z.optional(z.enum(['active', 'inactive'])),
            accepted_at: z.optional(isoTimestamp),
          }),
        ),
      ),
      affiliate_requests: z.optional(
        z.array(
          z.object({
            key: z.string(),
            uuid: z.optional(z.uuid()),
            status: z.optional(z.enum(['pending', 'accepted', 'declined'])),
            requested_at: z.optional(isoTimestamp),
            affiliate: z.object({ slug: z.string(), name: z.string(), email: z.email() }),
          }),
        ),
      ),
      invites: z.optional(
        z.array(
          z.object({
            key: z.string(),
            uuid: z.optional(z.uuid()),
            email: z.email(),
            sender_email: z.optional(z.email()),
            content: z.optional(z.string()),
            link_used_at: z.optional(z.nullable(isoTimestamp)),
          }),
        ),
      ),
      orders: z.optional(
        z.array(
          z.extend(orderCreateBody, {
            key: z.string(),
            uuid: z.optional(z.uuid()),
            created_at: z.optional(isoTimestamp),
            payment_id: z.optional(z.string()),
            cancelled_at: z.optional(isoTimestamp),
          }),
        ),
      ),
    }),
  ),
});

export type Fixture = z.output<typeof fixtureSchema>;

export const parseFixture = (input: unknown): Fixture => {
  const result = z.safeParse(fixtureSchema, input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new Error(`Invalid fixture:\n  ${problems.join('\n  ')}`);
};
