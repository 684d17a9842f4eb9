/**
 * `npm run bench:orders`: measures order creation and listing against a fresh in-memory local
 * stack on free ports, and prints figures (it asserts nothing; tests assert behaviour).
 *
 * - sequential create latency (p50/p95) through the full local path (HTTP -> handler -> DynamoDB
 *   Local transaction -> SQS emulator);
 * - bursts of N concurrent creates for ONE merchant: how many commit (201) and how many are told to
 *   retry (503) within the retry budget: the cost of dense per-merchant sequence numbers;
 * - list latency for page 1 vs the last page (both one GetItem + one Query).
 */
import { freePorts } from '../local/ports';
import { startLocalStack } from '../local/stack';
import { DEMO } from '../local/demo';

const stack = await startLocalStack({ ports: await freePorts(), seedDemo: true, workerEnv: { POWERTOOLS_LOG_LEVEL: 'ERROR' } });
const url = stack.stages.live.url;
const headers = { Authorization: `Bearer ${DEMO.tokens.live}`, 'Content-Type': 'application/json' };
let serial = 0;
const create = () =>
  fetch(`${url}/api/v2/orders/create`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      affiliate_slug: 'alice',
      order_no: `BENCH-${Date.now()}-${serial++}`,
      total_shipping_value: 0,
      currency_code: 'EUR',
      order_rows: [{ product_name: 'Tent', price_value: 19900, quantity: 1 }],
    }),
  }).then((response) => response.status);

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? 0;
const timed = async <T>(fn: () => Promise<T>) => {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
};

try {
  for (let index = 0; index < 10; index++) await create(); // warm-up
  const latencies: number[] = [];
  for (let index = 0; index < 200; index++) latencies.push((await timed(create)).ms);
  console.log(`sequential create: n=200 p50=${percentile(latencies, 50).toFixed(1)} ms p95=${percentile(latencies, 95).toFixed(1)} ms`);

  for (const size of [10, 30, 60, 100]) {
    const { value: statuses, ms } = await timed(() => Promise.all(Array.from({ length: size }, create)));
    const count = (status: number) => statuses.filter((candidate) => candidate === status).length;
    console.log(`burst of ${String(size).padStart(3)} concurrent creates, one merchant: 201=${count(201)} 503=${count(503)} other=${size - count(201) - count(503)} in ${ms.toFixed(0)} ms`);
  }

  const list = (page: number) => fetch(`${url}/api/v2/orders?per_page=15&page=${page}`, { headers }).then((response) => response.json() as Promise<{ meta: { pagination: { last_page: number } } }>);
  const lastPage = (await list(1)).meta.pagination.last_page;
  for (const page of [1, lastPage]) {
    const samples: number[] = [];
    for (let index = 0; index < 50; index++) samples.push((await timed(() => list(page))).ms);
    console.log(`list page ${String(page).padStart(3)} of ${lastPage}: p50=${percentile(samples, 50).toFixed(1)} ms p95=${percentile(samples, 95).toFixed(1)} ms`);
  }
} finally {
  await stack.stop();
}
