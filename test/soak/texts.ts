import { MAX_ORDER_ROWS_BYTES } from '#shared/schemas/order';

/**
 * The odd and the largest texts the API accepts, for the soak's orders. Every text field takes a
 * well-formed string of at most 255 UTF-16 code units (shared/schemas/common.ts) and an order at
 * most 200 rows (shared/schemas/order.ts), so these are all valid input: characters outside the
 * BMP (emoji, which the local SQS emulator refuses), the noncharacters U+FFFE and U+FFFF (which
 * SQS itself refuses), C0 controls and DEL, combining marks, right-to-left text and bidi controls,
 * and bodies of 200 rows whose text fields are 255 code units of 1-, 2-, 3- or 4-byte characters.
 */

/** The odd texts, each short enough to fit a field with a prefix; the name says what each carries. */
export const ODD_TEXTS = {
  emoji: 'Tent 🏕️ 👍🏽 👨‍👩‍👧 𝄞',
  noncharacters: 'Tent \uFFFE and \uFFFF inside',
  controls: 'Tent \u0001 bell \u0007 escape \u001B del \u007F',
  combining: 'Zelt e\u0301 a\u0308 n\u0303 Z\u0335\u0321\u0330a\u0336\u0317lgo',
  rtl: 'خيمة \u202Eltr-override\u202C עברית \u200F mark \u2067isolate\u2069',
  mixed: 'Ẓ́ 🏕️ \uFFFF עברית \u0301 北京',
} as const;
export type OddText = keyof typeof ODD_TEXTS;
export const ODD_TEXT_KINDS = Object.keys(ODD_TEXTS) as OddText[];

/**
 * The largest bodies: 200 rows, product_name, product_sku and segment_slug each 255 code units,
 * of characters of 1 (ASCII), 2 (Latin-1 letters), 3 (CJK) or 4 bytes (emoji: two code units
 * each, so 127 of them) in UTF-8.
 */
export const LARGE_TEXTS = { 'large-1byte': 'a', 'large-2byte': 'é', 'large-3byte': '北', 'large-4byte': '🏕' } as const;
export type LargeText = keyof typeof LARGE_TEXTS;
export const LARGE_TEXT_KINDS = Object.keys(LARGE_TEXTS) as LargeText[];

export type TextKind = OddText | LargeText;

export const MAX_FIELD_UNITS = 255;
export const MAX_ROWS = 200;

/**
 * Whether a create may be refused with 413 or 422 naming the reason: its rows take more UTF-8 bytes
 * than an order item can hold (the documented limit, MAX_ORDER_ROWS_BYTES). Below it the API must
 * accept the order and deliver it.
 */
export const refusableRows = (rows: unknown): boolean => Buffer.byteLength(JSON.stringify(rows), 'utf8') > MAX_ORDER_ROWS_BYTES;

/** `unit` repeated to exactly `units` UTF-16 code units, or one fewer when a unit is two of them. */
export const fill = (unit: string, units = MAX_FIELD_UNITS) => unit.repeat(Math.floor(units / unit.length));

/** A field that starts with `prefix` and carries the odd text (every odd text is short enough for any prefix the plan uses). */
export const oddField = (prefix: string, kind: OddText) => `${prefix} ${ODD_TEXTS[kind]}`;

export const isLarge = (kind: TextKind | undefined): kind is LargeText => kind !== undefined && kind in LARGE_TEXTS;
