import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OPENAPI_PATH } from '#scripts/openapi';

/**
 * Every response the integration suite receives through `api()` (helpers.ts) is checked against
 * the committed openapi.json: the status must be documented for the operation, the headers the
 * document names must be there (when required) and valid, and the body must validate (JSON Schema
 * 2020-12, ajv, strict objects: an undocumented field fails). Requests to a path and method the
 * document does not have (the unknown-route tests) have nothing to be checked against.
 */

type Json = Record<string, any>;

const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as Json;
const SCHEMA_BASE = 'https://openapi.local/schemas/';

/** `#/components/schemas/X` -> an absolute id per component, so ajv resolves refs between them. */
const rebase = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(rebase);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        key === '$ref' && typeof inner === 'string' ? inner.replace('#/components/schemas/', SCHEMA_BASE) : rebase(inner),
      ]),
    );
  }
  return value;
};

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv);
for (const [name, schema] of Object.entries(document.components.schemas as Json))
  ajv.addSchema(rebase(schema) as Json, `${SCHEMA_BASE}${name}`);

const compiled = new Map<unknown, ValidateFunction>();
const validatorFor = (schema: Json) => {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(rebase(schema) as Json);
    compiled.set(schema, validate);
  }
  return validate;
};

const resolve = (node: Json): Json => {
  if (typeof node.$ref !== 'string') return node;
  const path = (node.$ref as string).replace(/^#\//, '').split('/');
  return path.reduce<Json>((at, key) => at[key] as Json, document);
};

type Template = { method: string; path: string; segments: string[]; literals: number; operation: Json };

const templates: Template[] = Object.entries(document.paths as Json)
  .flatMap(([path, methods]) =>
    Object.entries(methods as Json).map(([method, operation]) => {
      const segments = path.split('/').filter(Boolean);
      return {
        method: method.toUpperCase(),
        path,
        segments,
        literals: segments.filter((segment) => !segment.startsWith('{')).length,
        operation: operation as Json,
      };
    }),
  )
  // API Gateway prefers literal segments over {params}.
  .sort((a, b) => b.literals - a.literals);

/** The documented operation a request reaches, if any. */
export const operationFor = (method: string, target: string): Template | undefined => {
  const parts = target.split('?')[0]!.split('/').filter(Boolean);
  return templates.find(
    (template) =>
      template.method === method.toUpperCase() &&
      template.segments.length === parts.length &&
      template.segments.every((segment, index) => segment.startsWith('{') || segment === parts[index]),
  );
};

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

/** Throws a ContractViolation naming every way the response departs from the document. */
export const assertDocumented = (method: string, target: string, response: { status: number; headers: Headers; body: unknown }) => {
  const template = operationFor(method, target);
  if (!template) return;
  const where = `${method} ${target} (${template.operation.operationId as string}) answered ${response.status}`;
  const documented = (template.operation.responses as Json)[String(response.status)] as Json | undefined;
  if (!documented) {
    throw new ContractViolation(
      `${where}: the document has no ${response.status} for this operation (${Object.keys(template.operation.responses as Json).join(', ')})`,
    );
  }
  const problems: string[] = [];
  for (const [name, headerRef] of Object.entries((documented.headers ?? {}) as Json)) {
    const header = resolve(headerRef as Json);
    const value = response.headers.get(name);
    if (value === null) {
      if (header.required) problems.push(`header ${name} is required`);
      continue;
    }
    const validate = validatorFor(header.schema as Json);
    if (!validate(value)) problems.push(`header ${name}: ${ajv.errorsText(validate.errors)}`);
  }
  const content = documented.content as Json | undefined;
  if (content) {
    const contentType = response.headers.get('content-type') ?? '';
    const media = Object.keys(content).find((type) => contentType.startsWith(type));
    if (!media) problems.push(`content-type ${contentType || '(none)'} is not one of ${Object.keys(content).join(', ')}`);
    else {
      const validate = validatorFor((content[media] as Json).schema as Json);
      if (!validate(response.body)) problems.push(`body: ${ajv.errorsText(validate.errors, { separator: '; ' })}`);
    }
  }
  if (problems.length > 0)
    throw new ContractViolation(
      `${where}, not as documented:\n- ${problems.join('\n- ')}\nbody: ${JSON.stringify(response.body)?.slice(0, 2000)}`,
    );
};
