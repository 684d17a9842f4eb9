import { readFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemo as seedDemoInto } from '#local/demo';
import { OPENAPI_PATH } from '#scripts/openapi';
import { merchantKey } from '#shared/db/entities/merchant';
import { findChromium } from './browser';
import { api, stack, storeFor } from './helpers';

/**
 * Every local stage serves the contract without a token: GET /openapi.json, and the API reference
 * at /docs (Swagger UI from node_modules), which a real headless Chromium renders with every
 * operation of the document on it. The browser is CHROMIUM_PATH, a system Chromium, or the one the
 * `@sparticuz/chromium` dev dependency ships (./browser.ts).
 */

/** The page's `document`, in the functions that run in the browser (tsconfig has no DOM lib). */
type PageGlobal = { document: { querySelectorAll(selector: string): { length: number } } };

type Json = Record<string, any>;

const committed = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as {
  paths: Record<string, Record<string, Json & { operationId: string }>>;
  webhooks: Record<string, Record<string, Json & { operationId: string }>>;
  servers: { url: string }[];
};

/** The demo merchant of `npm start`, which the document's request examples name. */
const seedDemo = async () => {
  const store = storeFor('live');
  const { Item } = await store.ddb.send(new GetCommand({ TableName: store.table, Key: merchantKey(DEMO.merchantId) }));
  if (!Item) await seedDemoInto(store, 'live', Number(new URL(stack.stages.live.url).port));
};
/** Every operation and every webhook (OpenAPI 3.1 `webhooks`, which the page lists too), as the page shows them. */
const documented = [...Object.entries(committed.paths), ...Object.entries(committed.webhooks)]
  .flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
  )
  .sort();

describe.each(['live', 'sandbox'] as const)('the %s stage serves its contract', (stage) => {
  it('answers GET /openapi.json without a token: the committed document, this stage first among the servers', async () => {
    // Prepare
    const url = `${stack.stages[stage].url}/openapi.json`;

    // Act
    const response = await fetch(url);
    const body = (await response.json()) as typeof committed;

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(body.paths).toEqual(committed.paths);
    expect(body.servers).toEqual([
      { url: stack.stages[stage].url, description: `This local ${stage} stage (npm start).` },
      ...committed.servers.filter((server) => server.url !== 'http://127.0.0.1:{port}'),
    ]);
  });

  it('answers GET /docs without a token with a page whose scripts and styles it serves itself', async () => {
    // Prepare
    const base = stack.stages[stage].url;

    // Act
    const page = await fetch(`${base}/docs`);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    const answers = await Promise.all(assets.map(async (asset) => (await fetch(new URL(asset, base))).status));

    // Assess
    expect(page.status).toBe(200);
    expect(assets.every((asset) => asset.startsWith('/docs/'))).toBe(true);
    expect(answers).toEqual(assets.map(() => 200));
  });
});

describe('the API reference page in a headless browser', () => {
  let browser: Browser;

  beforeAll(async () => {
    await seedDemo();
    const { executablePath } = await findChromium();
    browser = await puppeteer.launch({
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('shows every operation and webhook of the document, with its method, path and operation id', async () => {
    // Prepare
    const page = await browser.newPage();
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(stack.stages.live.url) && !request.url().startsWith('data:')) outside.push(request.url());
    });

    // Act
    await page.goto(`${stack.stages.live.url}/docs`, { waitUntil: 'networkidle0' });
    await page.waitForFunction(
      (count: number) => (globalThis as unknown as PageGlobal).document.querySelectorAll('.opblock').length >= count,
      { timeout: 20_000 },
      documented.length,
    );
    const shown = await page.$$eval('.opblock', (blocks) =>
      blocks.map((block) => {
        const method = block.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '';
        const path = block.querySelector('.opblock-summary [data-path]')?.getAttribute('data-path') ?? '';
        const id = block.querySelector('.opblock-summary-operation-id')?.textContent?.trim() ?? '';
        return `${method} ${path} ${id}`;
      }),
    );
    await page.close();

    // Assess
    expect(shown.sort()).toEqual(documented);
    expect(outside).toEqual([]);
  });

  it('creates an order on the first "Try it out" of POST /api/v2/orders/create with the demo token (201)', async () => {
    // Prepare
    const page = await browser.newPage();
    await page.goto(`${stack.stages.live.url}/docs`, { waitUntil: 'networkidle0' });
    await page.click('.btn.authorize');
    await page.type('.modal-ux input', DEMO.tokens.live);
    await page.click('.modal-ux .auth-btn-wrapper .authorize');
    await page.click('.modal-ux .btn-done');
    const operation = '#operations-Orders-orders-create';
    await page.click(`${operation} .opblock-summary-control`);
    await page.waitForSelector(`${operation} .try-out__btn`);
    await page.click(`${operation} .try-out__btn`);
    await page.waitForSelector(`${operation} .execute`);

    // Act
    await page.click(`${operation} .execute`);
    await page.waitForSelector(`${operation} .live-responses-table tr.response .response-col_status`, { timeout: 20_000 });
    const status = await page.$eval(`${operation} .live-responses-table tr.response .response-col_status`, (cell) =>
      cell.textContent?.trim(),
    );
    await page.close();

    // Assess
    expect(status).toBe('201');
  });
});

describe('the examples of the document, sent to the local stage with the demo token', () => {
  beforeAll(seedDemo);

  it.each(
    Object.entries(committed.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) => method === 'get')
        .map(([, operation]) => [operation.operationId, path, operation] as const),
    ),
  )('GET %s with its example parameters answers its documented success', async (_id, path, operation) => {
    // Prepare
    const parameters = operation.parameters as Json[];
    const url = parameters
      .filter((parameter) => parameter.in === 'path')
      .reduce((built, parameter) => built.replace(`{${parameter.name}}`, encodeURIComponent(parameter.example)), path);
    const query = new URLSearchParams(
      parameters
        // A parameter without an example (the deliveries cursor, bound to one list) is left out, as a client would.
        .filter((parameter) => parameter.in === 'query' && parameter.example !== undefined)
        .map((parameter): [string, string] => [parameter.name, String(parameter.example)]),
    );

    // Act
    const response = await api('live', DEMO.tokens.live).get(`${url}?${query}`);

    // Assess
    expect(response.status).toBe(200);
  });
});
