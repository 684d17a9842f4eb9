import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routes } from '#functions/routes';
import { CLIENT_TYPES_PATH, clientTypes, OPENAPI_PATH, serializeOpenApi } from '#scripts/openapi';
import { buildOpenApiDocument, IDEMPOTENCY_FACTS, operations } from '#scripts/openapi-document';
import { RECORD_TTL_SECONDS } from '#shared/db/entities/idempotency';
import { MAX_KEY_LENGTH, REPLAYED_HEADER } from '#shared/http/idempotency';

describe('openapi.json', () => {
  it('is what `npm run openapi` generates from the code (run it after changing a route or a schema)', () => {
    // Prepare
    const committed = readFileSync(OPENAPI_PATH, 'utf8');

    // Act
    const generated = serializeOpenApi(buildOpenApiDocument());

    // Assess
    expect(committed).toBe(generated);
  });

  it('has the client types of examples/ generated from it (npm run openapi)', async () => {
    // Prepare
    const committed = readFileSync(CLIENT_TYPES_PATH, 'utf8');

    // Act
    const generated = await clientTypes();

    // Assess
    expect(committed).toBe(generated);
  });

  it('has one operation per route of the manifest, at its method and path', () => {
    // Prepare
    const document = buildOpenApiDocument();

    // Act
    const found = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );

    // Assess
    expect(found.sort()).toEqual(routes.map((route) => `${route.method} ${route.path} ${route.id}`).sort());
  });

  it.each(routes.map((route) => [route.id, route.handler] as const))(
    'documents the request schemas %s validates with',
    async (id, handlerPath) => {
      // Prepare
      const module = (await import(/* @vite-ignore */ `../../${handlerPath}`)) as { handler: { schemas: Record<string, unknown> } };

      // Act
      const validated = module.handler.schemas;

      // Assess
      expect(Object.keys(validated).sort()).toEqual(Object.keys(operations[id].request).sort());
      for (const part of ['body', 'query', 'params'] as const) {
        expect(validated[part], part).toBe((operations[id].request as Record<string, unknown>)[part]);
      }
    },
  );

  it('states the Idempotency-Key facts the middleware enforces', () => {
    // Prepare
    const actual = { maxKeyLength: MAX_KEY_LENGTH, replayedHeader: REPLAYED_HEADER, recordTtlHours: RECORD_TTL_SECONDS / 3600 };

    // Act
    const documented = IDEMPOTENCY_FACTS;

    // Assess
    expect(documented).toEqual(actual);
  });
});
