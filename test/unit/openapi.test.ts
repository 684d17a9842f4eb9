import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { routes } from '#functions/routes';
import { CLIENT_TYPES_PATH, clientTypes, OPENAPI_PATH, serializeOpenApi } from '#scripts/openapi';
import { buildOpenApiDocument } from '#scripts/openapi-document';

type Json = Record<string, any>;

/** Every example in the document with the schema it illustrates: components, parameters, bodies and responses. */
const examplesOf = (document: Json): { where: string; schema: Json; value: unknown }[] => {
  const found: { where: string; schema: Json; value: unknown }[] = [];
  for (const [name, schema] of Object.entries(document.components.schemas as Json)) {
    for (const value of schema.examples ?? [])
      found.push({ where: `components.schemas.${name}`, schema: { $ref: `#/components/schemas/${name}` }, value });
  }
  for (const [path, methods] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(methods as Json)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters) {
        if ('example' in parameter)
          found.push({ where: `${at} parameter ${parameter.name}`, schema: parameter.schema, value: parameter.example });
      }
      const body = operation.requestBody?.content['application/json'];
      if (body && 'example' in body) found.push({ where: `${at} request body`, schema: body.schema, value: body.example });
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        const media = response.content['application/json'];
        if ('example' in media) found.push({ where: `${at} ${status}`, schema: media.schema, value: media.example });
        for (const [name, example] of Object.entries((media.examples ?? {}) as Json)) {
          found.push({ where: `${at} ${status} ${name}`, schema: media.schema, value: example.value });
        }
      }
    }
  }
  return found;
};

/** Every message string in an example body: errors.<field>[], a legacy `message`. */
const messagesIn = (value: unknown): string[] => {
  if (!value || typeof value !== 'object') return [];
  const body = value as Json;
  const fromErrors = (errors: Json | null | undefined) => Object.values(errors ?? {}).flat() as string[];
  return [...fromErrors(body.errors), ...fromErrors(body.data?.errors), ...(typeof body.message === 'string' ? [body.message] : [])];
};

describe('openapi.json', () => {
  it('is what `npm run openapi` generates from the code (run it after changing a route or a schema)', async () => {
    // Prepare
    const committed = readFileSync(OPENAPI_PATH, 'utf8');

    // Act
    const generated = serializeOpenApi(await buildOpenApiDocument());

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

  it('has one operation per route of the manifest, at its method and path', async () => {
    // Prepare
    const document = await buildOpenApiDocument();

    // Act
    const found = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );

    // Assess
    expect(found.sort()).toEqual(routes.map((route) => `${route.method} ${route.path} ${route.id}`).sort());
  });

  it('has an example for every request body, every parameter of a path and every response, each valid against its schema', async () => {
    // Prepare
    const document = (await buildOpenApiDocument()) as Json;
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ components: document.components }, 'openapi');
    const rebased = (schema: Json) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'));

    // Act
    const examples = examplesOf(document);
    const invalid = examples.filter(({ schema, value }) => !ajv.validate(rebased(schema), value)).map(({ where }) => where);
    const missing = Object.entries(document.paths as Json).flatMap(([path, methods]) =>
      Object.entries(methods as Json).flatMap(([method, operation]) => [
        ...operation.parameters
          .filter((parameter: Json) => parameter.in === 'path' && !('example' in parameter))
          .map((parameter: Json) => `${method} ${path} ${parameter.name}`),
        ...Object.entries(operation.responses as Json)
          .filter(
            ([, response]) => !('example' in response.content['application/json'] || 'examples' in response.content['application/json']),
          )
          .map(([status]) => `${method} ${path} ${status}`),
        ...(operation.requestBody?.required && !('example' in operation.requestBody.content['application/json'])
          ? [`${method} ${path} body`]
          : []),
      ]),
    );

    // Assess
    expect(examples.length).toBeGreaterThan(200);
    expect(invalid).toEqual([]);
    expect(missing).toEqual([]);
  });

  it('shows in its error examples only messages the code answers, never a placeholder', async () => {
    // Prepare
    const document = (await buildOpenApiDocument()) as Json;

    // Act
    const messages = new Set(examplesOf(document).flatMap(({ value }) => messagesIn(value)));

    // Assess
    expect(messages.size).toBeGreaterThan(20);
    for (const message of messages) {
      expect(message).not.toMatch(/additionalProp|^string$/);
      expect(message).toMatch(/^[A-Z].*[.]$|^Not Found$/);
    }
  });

  it('declares path parameters as plain strings: a value that names no resource is 404, not a format error', async () => {
    // Prepare
    const document = (await buildOpenApiDocument()) as Json;

    // Act
    const pathParameters = Object.values(document.paths as Json).flatMap((methods) =>
      Object.values(methods as Json).flatMap((operation) => operation.parameters.filter((parameter: Json) => parameter.in === 'path')),
    );

    // Assess
    expect(pathParameters.length).toBeGreaterThan(0);
    for (const parameter of pathParameters) expect(parameter.schema).toEqual({ type: 'string' });
  });

  it('names no schema like the types client generators derive from operations (`...Response`, `...Error`, `...Data`)', async () => {
    // Prepare
    const document = (await buildOpenApiDocument()) as Json;

    // Act
    const names = Object.keys(document.components.schemas);

    // Assess
    expect(names.filter((name) => /(Response|Responses|Error|Errors|Data)$/.test(name) && name !== 'FieldErrors')).toEqual([]);
  });
});
