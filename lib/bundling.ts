import { resolve } from 'node:path';
import { type BundlingOptions, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

// How every function is bundled, for the stack and scripts/bundle-size.ts alike (docs/contributing.md#how-functions-are-bundled).

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
