import * as z from 'zod/mini';
import { type AffiliateRequestStatus, REQUEST_STATUSES } from '#shared/db/entities/affiliate-request';
import { pageQueryShape } from '#shared/http/pagination';
import { commaList, emailAddress, optionalString, refuse, text } from './common';

export const programListQuery = z.object(pageQueryShape);

/** tier_slug: an unknown slug simply matches no affiliate (an empty page, not a 422). */
export const affiliateListQuery = z.object({ ...pageQueryShape, tier_slug: optionalString() });

/** email: a partial, case-insensitive match on the invited address. */
export const inviteListQuery = z.object({ ...pageQueryShape, email: optionalString() });

/** The affiliate-requests `status` filter: statuses separated by commas, `pending` when none; undefined when one is unknown. */
export const parseStatusFilter = (raw: string | null | undefined): AffiliateRequestStatus[] | undefined => {
  const statuses = commaList(raw ?? '', REQUEST_STATUSES);
  return statuses?.length === 0 ? ['pending'] : statuses;
};

// Laravel's `in` rule message; validate.ts fills in the attribute name.
const statusFilter = z.pipe(
  z.optional(text()),
  z.transform((value, ctx) => parseStatusFilter(value) ?? refuse(ctx, value, 'The selected :attribute is invalid.')),
);

export const affiliateRequestListQuery = z.object({ ...pageQueryShape, status: statusFilter });

/** The custom message placed in an invitation e-mail is capped (the spec sets no limit). */
export const MAX_INVITE_CONTENT = 5000;

export const inviteCreateBody = z.object({
  email: emailAddress(),
  sender_email: emailAddress(),
  content: optionalString(MAX_INVITE_CONTENT),
});

export type InviteCreateInput = z.output<typeof inviteCreateBody>;
