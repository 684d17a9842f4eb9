import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildOpenApiDocument } from './openapi-document';

/**
 * `npm run openapi`: writes openapi.json at the repository root from the code
 * (scripts/openapi-document.ts), then `npm run openapi:types` regenerates examples/api.d.ts.
 * test/unit/openapi.test.ts fails when the committed file differs from what this writes.
 */
export const OPENAPI_PATH = resolve(import.meta.dirname, '..', 'openapi.json');

export const serializeOpenApi = (document: unknown) => `${JSON.stringify(document, null, 2)}\n`;

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(OPENAPI_PATH, serializeOpenApi(buildOpenApiDocument()));
  console.log(`wrote ${OPENAPI_PATH}`);
}
