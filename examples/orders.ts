/**
 * A typed client of the Merchant API, generated from openapi.json: `examples/api.d.ts` holds the
 * types openapi-typescript writes (`npm run openapi` regenerates them), openapi-fetch makes the
 * calls. It creates an order, pages through the orders, and cancels the new one.
 *
 *   API_URL=http://127.0.0.1:3000 API_TOKEN=live_… AFFILIATE_SLUG=alice npx tsx examples/orders.ts
 *
 * Everything it sends and reads is checked by the compiler against the document: a misspelt
 * field, a wrong parameter or an unhandled response shape does not compile.
 */
import { randomUUID } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { components, paths } from './api';

type Order = components['schemas']['Order'];

/** What each variable is, for the one line a missing one gets. */
const VARIABLES = {
  API_URL: 'the API base address (default http://127.0.0.1:3000, the local live stage)',
  API_TOKEN: "a merchant token of that stage (npm start prints the demo's: live_DEMO-…)",
  AFFILIATE_SLUG: 'an active affiliate of the merchant (default alice)',
  CURRENCY: "the merchant's currency (default EUR)",
} as const;

/** The variables, or one line naming the first that is missing and exit code 1: no stack trace. */
const variables = (defaults: Partial<Record<keyof typeof VARIABLES, string>>) => {
  const values = {} as Record<keyof typeof VARIABLES, string>;
  for (const name of Object.keys(VARIABLES) as (keyof typeof VARIABLES)[]) {
    const value = process.env[name] || defaults[name];
    if (!value) {
      console.error(`examples/orders.ts: set ${name}, ${VARIABLES[name]}`);
      process.exit(1);
    }
    values[name] = value;
  }
  return values;
};

/** One line for any failure, the cause of a network error included ("fetch failed: connect ECONNREFUSED ..."). */
const oneLine = (error: unknown) => {
  const { message, cause } = error as Error & { cause?: { message?: string } };
  return cause?.message ? `${message}: ${cause.message}` : message;
};

/** The first error message of a failure envelope. */
const failed = (what: string, error: { errors: Record<string, string[]> } | undefined, status: number) =>
  new Error(`${what}: HTTP ${status} ${JSON.stringify(error?.errors ?? {})}`);

export const run = async (options: {
  baseUrl: string;
  token: string;
  affiliateSlug: string;
  currency: string;
  log?: (line: string) => void;
}) => {
  const log = options.log ?? console.log;
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.token}`, Accept: 'application/json' },
  });

  // 1. Create an order. The Idempotency-Key makes a retry of this very call safe.
  const created = await client.POST('/api/v2/orders/create', {
    params: { header: { 'Idempotency-Key': randomUUID() } },
    body: {
      affiliate_slug: options.affiliateSlug,
      order_no: `EXAMPLE-${randomUUID()}`,
      total_shipping_value: 495,
      currency_code: options.currency,
      customer: { name: 'Dan Doe', email: 'dan@example.com' },
      order_rows: [{ product_name: 'Tent', product_sku: 'TENT-2P', price_value: 19900, tax_value: 3781, quantity: 1 }],
    },
  });
  if (!created.data) throw failed('create', created.error, created.response.status);
  const { uuid, order_no } = created.data.data.order;
  log(`created ${order_no} (${uuid})`);

  // 2. Page through the orders, newest first, following the pagination.
  const orders: Order[] = [];
  for (let page = 1; ; page += 1) {
    const listed = await client.GET('/api/v2/orders', { params: { query: { per_page: 2, page } } });
    if (!listed.data) throw failed('list', listed.error, listed.response.status);
    orders.push(...listed.data.data.orders);
    const { current_page, last_page, total } = listed.data.meta.pagination;
    log(`page ${current_page}/${last_page}: ${listed.data.data.orders.length} of ${total} orders`);
    if (current_page >= last_page) break;
  }
  if (!orders.some((order) => order.uuid === uuid)) throw new Error(`the new order ${uuid} is not in the list`);

  // 3. Cancel it.
  const cancelled = await client.POST('/api/v2/orders/{uuid}/cancel', { params: { path: { uuid } } });
  if (!cancelled.data) throw failed('cancel', cancelled.error, cancelled.response.status);
  log(`cancelled ${cancelled.data.data.order.order_no} at ${cancelled.data.data.order.cancelled_at}`);
  return { uuid, listed: orders.length, cancelledAt: cancelled.data.data.order.cancelled_at };
};

if (process.argv[1] && import.meta.filename === (await import('node:path')).resolve(process.argv[1])) {
  const vars = variables({ API_URL: 'http://127.0.0.1:3000', AFFILIATE_SLUG: 'alice', CURRENCY: 'EUR' });
  run({ baseUrl: vars.API_URL, token: vars.API_TOKEN, affiliateSlug: vars.AFFILIATE_SLUG, currency: vars.CURRENCY }).catch(
    (error: unknown) => {
      console.error(`examples/orders.ts: ${oneLine(error)}`);
      process.exitCode = 1;
    },
  );
}
