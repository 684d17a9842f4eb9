import { resolve } from 'node:path';
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/**
 * How every function is bundled, in one place: the stack (NodejsFunction) and
 * scripts/bundle-size.ts both read these options, so the sizes the script prints are the sizes
 * that get deployed.
 *
 * - ESM, minified, for Node.js 22; `module` before `main` so packages that ship ESM are tree-shaken.
 * - The AWS SDK is bundled (no externals): the runtime's copy is not pinned and costs a second
 *   resolution at cold start.
 * - A `require` for the few CommonJS dependencies that require Node built-ins from an ESM bundle.
 * - `@aws-sdk/credential-provider-node` is replaced by an environment-only provider (see
 *   lib/bundle-shims/credential-provider-env.ts): Lambda's credentials are always in the
 *   environment, and the full chain is about 100 KB per bundle.
 * - `@smithy/core/event-streams` is replaced by a stub that throws (see
 *   lib/bundle-shims/no-event-streams.ts): no DynamoDB, SQS or SES operation streams events, and
 *   the codec is about 15 KB per bundle.
 * - No source maps: stack traces of a minified bundle are less readable, but the maps would double
 *   the upload and `--enable-source-maps` slows every error; the logs carry the trace id instead.
 */

export const ROOT = resolve(import.meta.dirname, '..');

export const NODE_TARGET = 'node22';

export const REQUIRE_SHIM_BANNER =
  "import { createRequire as __cjsRequire } from 'node:module'; const require = __cjsRequire(import.meta.url);";

export const ESBUILD_ALIASES: Record<string, string> = {
  '@aws-sdk/credential-provider-node': resolve(ROOT, 'lib/bundle-shims/credential-provider-env.ts'),
  '@smithy/core/event-streams': resolve(ROOT, 'lib/bundle-shims/no-event-streams.ts'),
};

export const MAIN_FIELDS = ['module', 'main'];

/** NodejsFunction's `bundling` prop. */
export const cdkBundling = (): BundlingOptions => ({
  format: OutputFormat.ESM,
  target: NODE_TARGET,
  minify: true,
  sourceMap: false,
  externalModules: [],
  mainFields: MAIN_FIELDS,
  banner: REQUIRE_SHIM_BANNER,
  esbuildArgs: { '--alias': Object.entries(ESBUILD_ALIASES).map(([from, to]) => `${from}=${to}`) },
});

/** The same build through esbuild's API (what NodejsFunction runs through its CLI). */
export const esbuildOptions = (entry: string, outfile: string): BuildOptions => ({
  entryPoints: [resolve(ROOT, entry)],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: NODE_TARGET,
  minify: true,
  sourcemap: false,
  external: [],
  mainFields: MAIN_FIELDS,
  banner: { js: REQUIRE_SHIM_BANNER },
  alias: ESBUILD_ALIASES,
  logLevel: 'warning',
});
