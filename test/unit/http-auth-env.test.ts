/**
 * Authentication behaviour that depends on environment read at import time (STAGE,
 * AUTH_CACHE_TTL_SECONDS): each test stubs the env, resets the module registry and imports the
 * handler afresh.
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { apiEvent, expectV2Error, invoke } from './support/api';
import { ddbMock, resetAwsMocks } from './support/aws';
import { orderBody, orderPuts, stubAuth, stubOrderCreate, TOKENS, type TokenStub } from './support/fixtures';

const TOKEN_LOOKUP = { KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk = :sk' };

const importFresh = async (env: Record<string, string>) => {
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  vi.resetModules();
  const [create, legacy, list] = await Promise.all([
    import('#functions/orders/create'),
    import('#functions/orders/create-legacy'),
    import('#functions/orders/list'),
  ]);
  return { createV2: create.handler, createLegacy: legacy.handler, listOrders: list.handler };
};

const SANDBOX_TOKENS: TokenStub[] = [
  { token: TOKENS.live },
  // On sandbox the live-orders permission is irrelevant.
  { token: TOKENS.testing, kind: 'testing', canPlaceLiveOrders: false },
];

beforeEach(() => {
  resetAwsMocks();
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('on the sandbox stage', () => {
  it('answers 403 to a live token before any table read', async () => {
    // Prepare
    stubAuth({ tokens: SANDBOX_TOKENS });
    const { createV2 } = await importFresh({ STAGE: 'sandbox' });

    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.live, body: orderBody(), stage: 'sandbox' }));

    // Assess
    expectV2Error(response, 403, { message: ['A live token cannot be used on the sandbox API.'] });
    expect(ddbMock).not.toHaveReceivedAnyCommand();
  });

  it('answers 403 in the legacy envelope to a live token on the legacy route', async () => {
    // Prepare
    stubAuth({ tokens: SANDBOX_TOKENS });
    const { createLegacy } = await importFresh({ STAGE: 'sandbox' });

    // Act
    const response = await invoke(
      createLegacy,
      apiEvent('orders-create-legacy', { token: TOKENS.live, body: orderBody(), stage: 'sandbox' }),
    );

    // Assess
    expect(response.statusCode).toBe(403);
    expect(response.body).toEqual({ success: false, message: 'A live token cannot be used on the sandbox API.', data: [] });
  });

  it('lets a testing token create orders, whatever its live-orders permission', async () => {
    // Prepare
    stubAuth({ tokens: SANDBOX_TOKENS });
    stubOrderCreate();
    const { createV2 } = await importFresh({ STAGE: 'sandbox' });

    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.testing, body: orderBody(), stage: 'sandbox' }));

    // Assess
    expect(response.statusCode).toBe(201);
    expect(orderPuts()).toHaveLength(1);
  });
});

describe('with a credential cache (AUTH_CACHE_TTL_SECONDS=30)', () => {
  it('serves a warm request from the cache, without reading the table again', async () => {
    // Prepare
    stubAuth();
    stubOrderCreate();
    const { listOrders } = await importFresh({ AUTH_CACHE_TTL_SECONDS: '30' });

    // Act
    const first = await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.live }));
    const second = await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.live }));

    // Assess
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    expect(ddbMock.commandCalls(QueryCommand, TOKEN_LOOKUP)).toHaveLength(1);
  });

  it('never caches an unknown token', async () => {
    // Prepare
    stubAuth();
    const { listOrders } = await importFresh({ AUTH_CACHE_TTL_SECONDS: '30' });

    // Act
    const first = await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.unknown }));
    const second = await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.unknown }));

    // Assess
    expect([first.statusCode, second.statusCode]).toEqual([401, 401]);
    expect(ddbMock.commandCalls(QueryCommand, TOKEN_LOOKUP)).toHaveLength(2);
  });

  it('checks the live-orders permission on every request, cached or not', async () => {
    // Prepare
    stubAuth();
    stubOrderCreate();
    const { listOrders, createV2 } = await importFresh({ AUTH_CACHE_TTL_SECONDS: '30' });
    await invoke(listOrders, apiEvent('orders-list', { token: TOKENS.noLiveOrders }));

    // Act
    const response = await invoke(createV2, apiEvent('orders-create', { token: TOKENS.noLiveOrders, body: orderBody() }));

    // Assess
    expect(response.statusCode).toBe(403);
    expect(ddbMock).not.toHaveReceivedCommand(PutCommand);
    expect(ddbMock).toHaveReceivedCommandTimes(GetCommand, 1); // the merchant, once: cached for the create
  });
});
