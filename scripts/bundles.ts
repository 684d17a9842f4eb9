import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { esbuildOptions } from '#lib/bundling';
import { type FunctionSpec, functionEnvironment, PLACEHOLDER_VALUES } from '#lib/function-specs';
import { asError } from '#shared/errors';

/** Bundles functions as the stack does and imports a bundle in a fresh process: a cold start's init, minus Lambda's runtime. */

const run = promisify(execFile);

export type Bundle = { spec: FunctionSpec; file: string; bytes: number; gzipBytes: number };

export const bundleFunction = async (spec: FunctionSpec, outDir: string): Promise<Bundle> => {
  const file = join(outDir, spec.id, 'index.mjs');
  await build(esbuildOptions(spec.handler, file));
  const code = readFileSync(file);
  return { spec, file, bytes: code.length, gzipBytes: gzipSync(code).length };
};

/** The function's deployed environment (placeholder values), plus what the Lambda runtime sets. */
const lambdaLikeEnvironment = (spec: FunctionSpec): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'bundle-check',
  AWS_SECRET_ACCESS_KEY: 'bundle-check',
  AWS_SESSION_TOKEN: 'bundle-check',
  AWS_LAMBDA_FUNCTION_NAME: spec.id,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  ...functionEnvironment(spec, PLACEHOLDER_VALUES),
});

/** Imports the bundle and reports its import's wall time, its CPU time (the budget's measure) and the init's from the process's start. */
const IMPORT_PROBE = `
const started = performance.now();
const cpuBefore = process.cpuUsage();
const module = await import(process.argv[1]);
if (typeof module.handler !== 'function') throw new Error('the bundle exports no handler function');
const ready = performance.now();
const cpu = process.cpuUsage(cpuBefore);
console.log(JSON.stringify({ importMs: ready - started, initMs: ready, importCpuMs: (cpu.user + cpu.system) / 1000 }));
`;

export type ImportTimes = { importMs: number; initMs: number; importCpuMs: number };
type ImportResult = ({ ok: true } & ImportTimes) | { ok: false; error: string };

/** Every function's median import CPU (IMPORT_PROBE), with the heaviest bundle's size when it was set, for scale. */
export const COLD_START_BUDGET = { importCpuMs: 250, heaviestBytes: 322.4 * 1024 };
export const MAX_BUNDLE_BYTES = 420 * 1024;

/** Imports the bundle in a fresh process; returns the import time or the init error. */
export const importBundle = async (bundle: Bundle): Promise<ImportResult> => {
  try {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', IMPORT_PROBE, pathToFileURL(bundle.file).href], {
      env: lambdaLikeEnvironment(bundle.spec),
    });
    return { ok: true, ...(JSON.parse(stdout.trim()) as ImportTimes) };
  } catch (error) {
    const output = (error as { stderr?: string }).stderr ?? asError(error).message;
    const reason = /^[ \t]*(\w*Error\b.*)$/m.exec(output)?.[1]?.trim() ?? 'import failed';
    return { ok: false, error: reason.slice(0, 200) };
  }
};
