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

/**
 * Bundles functions exactly as the stack does (lib/bundling.ts) and imports a bundle in a fresh
 * Node.js process with the environment the stack gives that function: what a cold start's init
 * phase does, minus the Lambda runtime. Used by scripts/bundle-size.ts and test/infra.
 */

const run = promisify(execFile);

export type Bundle = { spec: FunctionSpec; file: string; bytes: number; gzipBytes: number };

export const bundleFunction = async (spec: FunctionSpec, outDir: string): Promise<Bundle> => {
  const file = join(outDir, spec.id, 'index.mjs');
  await build(esbuildOptions(spec.handler, file));
  const code = readFileSync(file);
  return { spec, file, bytes: code.length, gzipBytes: gzipSync(code).length };
};

/** The function's deployed environment (placeholder values), plus what the Lambda runtime sets. */
export const lambdaLikeEnvironment = (spec: FunctionSpec): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'bundle-check',
  AWS_SECRET_ACCESS_KEY: 'bundle-check',
  AWS_SESSION_TOKEN: 'bundle-check',
  AWS_LAMBDA_FUNCTION_NAME: spec.id,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  ...functionEnvironment(spec, PLACEHOLDER_VALUES),
});

/**
 * Runs in a fresh Node.js process: imports the bundle (its module-scope code: clients, config) and
 * reports the import's wall time, the init's wall time from the process's start (Node's own boot
 * included: Lambda bills both as Init Duration), and the CPU time of the import. Wall time on a
 * shared 2-core machine swings 3-10x with its load; the import's CPU time stays within about 15 %,
 * so the budget is set on that.
 */
const IMPORT_PROBE = `
const started = performance.now();
const cpuBefore = process.cpuUsage();
const module = await import(process.argv[1]);
if (typeof module.handler !== 'function') throw new Error('the bundle exports no handler function');
const ready = performance.now();
const cpu = process.cpuUsage(cpuBefore);
console.log(JSON.stringify({ importMs: ready - started, initMs: ready, importCpuMs: (cpu.user + cpu.system) / 1000 }));
`;

export type ImportResult = { ok: true; ms: number; initMs: number; importCpuMs: number } | { ok: false; error: string };

/**
 * The cold-start budget of every function: the median CPU time of importing its bundle (see
 * IMPORT_PROBE), with the heaviest bundle's size when the budget was set beside it, for scale
 * (docs/contributing.md, "The cold-start budget"). `npm run bundle-size` (median of 20) and
 * test/infra/function-init.test.ts (median of 3, part of npm test) fail past it.
 */
export const COLD_START_BUDGET = { importCpuMs: 250, heaviestBytes: 322.4 * 1024 };
export const MAX_BUNDLE_BYTES = 420 * 1024;

/** Imports the bundle in a fresh process; returns the import time or the init error. */
export const importBundle = async (bundle: Bundle): Promise<ImportResult> => {
  try {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', IMPORT_PROBE, pathToFileURL(bundle.file).href], {
      env: lambdaLikeEnvironment(bundle.spec),
    });
    const { importMs, initMs, importCpuMs } = JSON.parse(stdout.trim()) as { importMs: number; initMs: number; importCpuMs: number };
    return { ok: true, ms: importMs, initMs, importCpuMs };
  } catch (error) {
    const output = (error as { stderr?: string }).stderr ?? asError(error).message;
    const reason =
      output
        .split('\n')
        .find((line) => /^\w*Error\b/.test(line.trim()))
        ?.trim() ?? 'import failed';
    return { ok: false, error: reason.slice(0, 200) };
  }
};
