import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * The `handler` export of a function module named by a manifest (`functions/routes.ts`,
 * `functions/workers.ts`: paths relative to the repository root). The module reads its environment
 * at import, as in Lambda, so set the stage's environment first.
 */
export const importHandler = async <T>(file: string): Promise<T> => (await import(pathToFileURL(resolve(ROOT, file)).href)).handler as T;
