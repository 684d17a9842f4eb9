import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');

/** The `handler` export of a function module a manifest names; it reads its environment at import, so set the stage's first. */
export const importHandler = async <T>(file: string): Promise<T> => (await import(pathToFileURL(resolve(ROOT, file)).href)).handler as T;
