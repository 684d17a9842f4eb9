import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { resolve } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route, routeById, routes } from '#functions/routes';
import { functionSpecs } from '#lib/function-specs';
import { buildEvent, lambdaContext } from '#local/apigw';
import { DEMO, seedDemo } from '#local/demo';
import { importHandler } from '#local/handlers';
import { stageEnvironment } from '#local/stack';
import { eventFileContent, ROUTE_SAMPLES, sampleEvents } from '#scripts/event-samples';
import { merchantKey } from '#shared/db/entities/merchant';
import { stack, storeFor } from './helpers';

/**
 * Every sample event in events/ runs through its handler, in this process, against the shared
 * integration stack seeded with the demo merchant: what `npm run invoke -- <id>` does against
 * `npm start`. Samples run in the table's order (update before cancel).
 */
const ROOT = resolve(import.meta.dirname, '..', '..');
const EVENTS_DIR = resolve(ROOT, 'events');
const readEvent = (id: string) => JSON.parse(readFileSync(resolve(EVENTS_DIR, `${id}.json`), 'utf8'));
const savedEnv = { ...process.env };

beforeAll(async () => {
  const live = stack.stages.live;
  Object.assign(process.env, stageEnvironment('live', live, stack.endpoints), {
    POWERTOOLS_LOG_LEVEL: 'ERROR',
  });
  const store = storeFor('live');
  const { Item } = await store.ddb.send(new GetCommand({ TableName: store.table, Key: merchantKey(DEMO.merchantId) }));
  if (!Item) await seedDemo(store, 'live', Number(new URL(live.url).port));
});

afterAll(() => {
  process.env = savedEnv;
});

/** Invokes a function's handler as Lambda would, with its own timeout. */
const invoke = async (handlerFile: string, id: string, event: unknown) => {
  const handler = await importHandler<(event: unknown, context: unknown) => Promise<any>>(handlerFile);
  return handler(event, lambdaContext(id, functionSpecs().find((spec) => spec.id === id)?.timeoutSeconds));
};

describe('the sample events', () => {
  it('exist for every route of the manifest, and match the sample table', () => {
    for (const { id } of routes) expect(existsSync(resolve(EVENTS_DIR, `${id}.json`)), `events/${id}.json`).toBe(true);
    const events = sampleEvents();
    for (const spec of functionSpecs()) expect(Object.keys(events), 'a sample per function').toContain(spec.id);
    const files = readdirSync(EVENTS_DIR).filter((file) => file.endsWith('.json'));
    expect(files.sort()).toEqual(
      Object.keys(events)
        .map((id) => `${id}.json`)
        .sort(),
    );
    for (const [id, event] of Object.entries(events)) {
      expect(readFileSync(resolve(EVENTS_DIR, `${id}.json`), 'utf8'), `events/${id}.json is stale: run npm run events`).toBe(
        eventFileContent(event),
      );
    }
  });

  it('have the shape of the event the local server (and API Gateway) builds', () => {
    const listRoute = route('orders-list');
    const fileEvent = readEvent(listRoute.id);
    const request = {
      rawHeaders: ['Host', '127.0.0.1:3000', 'Accept', 'application/json'],
      headers: { host: '127.0.0.1:3000', accept: 'application/json' },
      socket: { remoteAddress: '127.0.0.1', localPort: 3000 },
      httpVersion: '1.1',
    } as unknown as IncomingMessage;
    const built = buildEvent({
      request,
      url: new URL(`http://127.0.0.1:3000${listRoute.path}?page=1`),
      route: listRoute,
      params: {},
      body: '',
      stage: 'live',
    });
    const shape = (value: Record<string, unknown>) => Object.keys(JSON.parse(JSON.stringify(value))).sort();
    expect(shape(fileEvent)).toEqual(shape(built as unknown as Record<string, unknown>));
    expect(shape(fileEvent.requestContext)).toEqual(shape(built.requestContext as unknown as Record<string, unknown>));
    expect(shape(fileEvent.requestContext.identity)).toEqual(shape(built.requestContext.identity as unknown as Record<string, unknown>));
  });

  for (const { id } of ROUTE_SAMPLES) {
    const { handler, status = 200 } = routeById(id);
    it(`${id}: answers ${status} to events/${id}.json`, async () => {
      const result = await invoke(handler, id, readEvent(id));
      const body = JSON.parse(result.body);
      expect({ status: result.statusCode, errors: body.errors ?? null }).toEqual({ status, errors: null });
      expect(body.success).toBe(true);
    });
  }

  it('commissions-process: processes events/commissions-process.json without failures', async () => {
    const worker = functionSpecs().find((spec) => spec.id === 'commissions-process')!;
    expect(await invoke(worker.handler, worker.id, readEvent(worker.id))).toEqual({ batchItemFailures: [] });
  });

  it('change-feed: reacts to events/change-feed.json (a new order) without failures', async () => {
    const worker = functionSpecs().find((spec) => spec.id === 'change-feed')!;
    expect(await invoke(worker.handler, worker.id, readEvent(worker.id))).toEqual({ batchItemFailures: [] });
  });

  for (const id of ['webhooks-deliver', 'webhooks-deliver-slow']) {
    it(`${id}: takes events/${id}.json (a test event) without failures`, async () => {
      const worker = functionSpecs().find((spec) => spec.id === id)!;
      expect(await invoke(worker.handler, worker.id, readEvent(worker.id))).toEqual({ batchItemFailures: [] });
    });
  }

  it('follow-ups: does the recount of events/follow-ups.json without failures', async () => {
    const worker = functionSpecs().find((spec) => spec.id === 'follow-ups')!;
    expect(await invoke(worker.handler, worker.id, readEvent(worker.id))).toEqual({ batchItemFailures: [] });
  });
});
