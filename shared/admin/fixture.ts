import * as z from 'zod/mini';
import { REQUEST_STATUSES } from '#shared/db/entities/affiliate-request';
import { MAX_SEGMENTS } from '#shared/db/entities/segment';
import { MAX_TIERS } from '#shared/db/entities/tier';
import { isKnownCurrency } from '#shared/domain/currency';
import { emailAddress, requiredString, text } from '#shared/schemas/common';
import { orderCreateBody } from '#shared/schemas/order';
import { laravelErrors } from '#shared/validation/messages';

/** The seed fixture format of DESIGN.md. Besides it, optional fixed ids/values (used by the demo). */
const isoTimestamp = z.iso.datetime({ offset: true });
/** Any other text: well-formed, at most `max` characters. */
const words = (max = 255) => text().check(z.maxLength(max));
/** An optional list of fixture entries. */
const list = <T extends z.ZodMiniType>(entry: T) => z.optional(z.array(entry));

const fixtureSchema = z.object({
  merchants: z.array(
    z.object({
      key: requiredString(),
      id: z.optional(z.uuid()),
      name: requiredString(),
      currency: text().check(z.length(3)),
      users: list(z.object({ email: emailAddress(), name: z.optional(words()) })),
      tokens: list(
        z.object({
          key: requiredString(),
          kind: z.optional(z.enum(['live', 'testing'])),
          can_place_live_orders: z.optional(z.boolean()),
          /** A fixed token string (the demo's, so events/ can use it); minted when absent. */
          value: z.optional(z.string().check(z.regex(/^(live|test)_[A-Za-z0-9_-]{32,}$/))),
        }),
      ),
      tiers: z.optional(
        z
          .array(
            z.object({
              slug: requiredString(),
              name: requiredString(),
              description: z.optional(words()),
              default: z.optional(z.boolean()),
            }),
          )
          .check(z.maxLength(MAX_TIERS)),
      ),
      segments: z.optional(
        z
          .array(
            z.object({
              key: requiredString(),
              uuid: z.optional(z.uuid()),
              name: requiredString(),
              description: z.optional(words()),
              default: z.optional(z.boolean()),
              type: z.optional(z.literal('percentage')),
              slugs: z.optional(z.array(requiredString())),
              skus: z.optional(z.array(requiredString())),
              // Percent, 0 to 100 with at most two decimals: what a commission can be computed from (shared/money.ts).
              rates: z.optional(z.record(z.string(), z.number().check(z.minimum(0), z.maximum(100), z.multipleOf(0.01)))),
            }),
          )
          .check(z.maxLength(MAX_SEGMENTS)),
      ),
      affiliates: list(
        z.object({
          slug: requiredString(),
          name: requiredString(),
          email: emailAddress(),
          tier: z.optional(requiredString()),
          status: z.optional(z.enum(['active', 'inactive'])),
          accepted_at: z.optional(isoTimestamp),
        }),
      ),
      affiliate_requests: list(
        z.object({
          key: requiredString(),
          uuid: z.optional(z.uuid()),
          status: z.optional(z.enum(REQUEST_STATUSES)),
          requested_at: z.optional(isoTimestamp),
          affiliate: z.object({ slug: requiredString(), name: requiredString(), email: emailAddress() }),
        }),
      ),
      invites: list(
        z.object({
          key: requiredString(),
          uuid: z.optional(z.uuid()),
          email: emailAddress(),
          sender_email: z.optional(emailAddress()),
          content: z.optional(words(5000)),
          link_used_at: z.optional(z.nullable(isoTimestamp)),
        }),
      ),
      orders: list(
        z.extend(orderCreateBody, {
          key: requiredString(),
          uuid: z.optional(z.uuid()),
          created_at: z.optional(isoTimestamp),
          payment_id: z.optional(requiredString()),
          cancelled_at: z.optional(isoTimestamp),
        }),
      ),
    }),
  ),
});

export type Fixture = z.output<typeof fixtureSchema>;

/** The API's own field messages, one line per field, with the path into the fixture. */
export const parseFixture = (input: unknown): Fixture => {
  const result = z.safeParse(fixtureSchema, input);
  if (result.success) return result.data;
  const problems = Object.entries(laravelErrors(result.error.issues, input)).map(([path, [message]]) => `${path}: ${message}`);
  throw new Error(`Invalid fixture:\n  ${problems.join('\n  ')}`);
};

const repeated = (values: readonly string[]) => {
  const seen = new Set<string>();
  return [...new Set(values.filter((value) => seen.has(value) || !seen.add(value)))];
};

/** A slug is part of several sort keys (its item's, its report totals'): this many UTF-8 bytes keeps each within DynamoDB's 1,024. */
export const MAX_SLUG_BYTES = 765;
const overlong = (slug: string) => Buffer.byteLength(slug, 'utf8') > MAX_SLUG_BYTES;
/** A tier's slug is also its list bucket, percent-encoded into the sort keys of its counts: at most this long encoded. */
export const MAX_TIER_BUCKET_LENGTH = 1_000;
const lower = (value: string) => value.toLowerCase();

export type FixtureMerchant = Fixture['merchants'][number];

/** What must be unique within a merchant, by name (slugs and e-mails in any case). */
const uniqueValues = (merchant: FixtureMerchant): [string, string[]][] => [
  ['token key', (merchant.tokens ?? []).map((token) => token.key)],
  ['tier slug', (merchant.tiers ?? []).map((tier) => lower(tier.slug))],
  ['segment key', (merchant.segments ?? []).map((segment) => segment.key)],
  // A row's segment is the one naming its slug (in any case), else the default: one of each, or the choice is arbitrary.
  ['segment slug', (merchant.segments ?? []).flatMap((segment) => [...new Set((segment.slugs ?? []).map(lower))])],
  ['default segment', (merchant.segments ?? []).filter((segment) => segment.default === true).map(() => 'default')],
  ['affiliate slug', (merchant.affiliates ?? []).map((affiliate) => lower(affiliate.slug))],
  ['affiliate request key', (merchant.affiliate_requests ?? []).map((request) => request.key)],
  ['invite key', (merchant.invites ?? []).map((invite) => invite.key)],
  ['invite e-mail', (merchant.invites ?? []).map((invite) => lower(invite.email))],
  ['order key', (merchant.orders ?? []).map((order) => order.key)],
  ['order_no', (merchant.orders ?? []).map((order) => order.order_no)],
];

/** What is wrong with one merchant of a parsed fixture beyond its fields: uniqueness and references. */
const merchantProblems = (merchant: FixtureMerchant): string[] => {
  const problems = uniqueValues(merchant).flatMap(([what, values]) =>
    repeated(values).map((value) => `${what} ${JSON.stringify(value)} is used twice`),
  );
  if (!isKnownCurrency(merchant.currency)) problems.push(`currency ${merchant.currency} is not an ISO 4217 code`);
  const tiers = (merchant.tiers ?? []).map((tier) => lower(tier.slug));
  const knownTiers = new Set(tiers.length > 0 ? tiers : ['default']);
  const slugs = new Set(
    [...(merchant.affiliates ?? []), ...(merchant.affiliate_requests ?? []).map((request) => request.affiliate)].map((affiliate) =>
      lower(affiliate.slug),
    ),
  );
  for (const slug of [...slugs, ...tiers].filter(overlong))
    problems.push(`slug ${slug} is over ${MAX_SLUG_BYTES} UTF-8 bytes, too long for its keys`);
  for (const tier of tiers.filter((slug) => encodeURIComponent(slug).length > MAX_TIER_BUCKET_LENGTH))
    problems.push(`tier ${tier} is over ${MAX_TIER_BUCKET_LENGTH} characters once percent-encoded, too long for its list counts' keys`);
  for (const affiliate of merchant.affiliates ?? [])
    if (affiliate.tier !== undefined && !knownTiers.has(lower(affiliate.tier)))
      problems.push(`affiliate ${affiliate.slug}: tier ${affiliate.tier} is not in the fixture`);
  for (const segment of merchant.segments ?? []) {
    const rated = Object.keys(segment.rates ?? {});
    for (const tier of rated)
      if (!knownTiers.has(lower(tier))) problems.push(`segment ${segment.key}: a rate for tier ${tier}, which is not in the fixture`);
    problems.push(...repeated(rated.map(lower)).map((tier) => `segment ${segment.key}: two rates for tier ${JSON.stringify(tier)}`));
  }
  for (const order of merchant.orders ?? []) {
    if (!slugs.has(lower(order.affiliate_slug)))
      problems.push(`order ${order.key}: affiliate ${order.affiliate_slug} is not in the fixture`);
    if (order.currency_code.toUpperCase() !== merchant.currency.toUpperCase())
      problems.push(`order ${order.key}: currency ${order.currency_code} is not the merchant's (${merchant.currency})`);
  }
  return problems;
};

/** Every problem of a parsed fixture that its fields alone do not show, merchant by merchant; empty when it can be seeded. */
export const fixtureProblems = (fixture: Fixture): string[] => [
  ...repeated(fixture.merchants.map((merchant) => merchant.key)).map((key) => `merchant key ${JSON.stringify(key)} is used twice`),
  ...repeated(fixture.merchants.flatMap((merchant) => (merchant.id ? [lower(merchant.id)] : []))).map(
    (id) => `merchant id ${id} is used twice`,
  ),
  // A token's value names one merchant (its hash is the lookup key): never two.
  ...repeated(fixedTokenValues(fixture)).map(() => 'a token value is used twice (a token opens one merchant)'),
  ...fixture.merchants.flatMap((merchant) => merchantProblems(merchant).map((problem) => `merchant ${merchant.key}: ${problem}`)),
];

/** The token values a fixture fixes (the others are minted). */
export const fixedTokenValues = (fixture: Fixture): string[] =>
  fixture.merchants.flatMap((merchant) => (merchant.tokens ?? []).flatMap((token) => (token.value ? [token.value] : [])));
