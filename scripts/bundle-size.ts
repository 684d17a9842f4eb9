/**
 * `npm run bundle-size`: bundles every function exactly as the stack does (lib/bundling.ts) and
 * prints each bundle's minified and gzipped size, and the time a fresh Node.js process takes to
 * import it with the environment the stack gives that function (a cold start's init phase, minus
 * the Lambda runtime). Fails if the heaviest bundle reaches 400 KB or a bundle cannot initialise.
 *
 *   npm run bundle-size                  all functions, median of 3 imports each
 *   npm run bundle-size -- --runs 5      median of 5
 *   npm run bundle-size -- --no-import   sizes only
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { functionSpecs } from '#lib/function-specs';
import { bundleFunction, importBundle } from './bundles';

const LIMIT_BYTES = 400 * 1024;
const args = process.argv.slice(2);
const runsArg = args.indexOf('--runs');
const runs = runsArg >= 0 ? Math.max(1, Number(args[runsArg + 1]) || 3) : 3;
const measureImport = !args.includes('--no-import');

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const outDir = mkdtempSync(join(tmpdir(), 'merchant-api-bundles-'));
try {
  const bundles = await Promise.all(functionSpecs().map((spec) => bundleFunction(spec, outDir)));
  const rows: { id: string; kind: string; bytes: number; gzipBytes: number; ms?: number; error?: string }[] = [];
  for (const bundle of bundles) {
    const row: (typeof rows)[number] = { id: bundle.spec.id, kind: bundle.spec.kind, bytes: bundle.bytes, gzipBytes: bundle.gzipBytes };
    if (measureImport) {
      const samples: number[] = [];
      for (let index = 0; index < runs && !row.error; index++) {
        const result = await importBundle(bundle);
        if (result.ok) samples.push(result.ms);
        else row.error = result.error;
      }
      if (!row.error) row.ms = median(samples);
    }
    rows.push(row);
  }
  rows.sort((a, b) => b.bytes - a.bytes);

  const width = Math.max(...rows.map((row) => row.id.length), 'function'.length);
  const header = `${'function'.padEnd(width)}  ${'kind'.padEnd(6)}  ${'minified'.padStart(10)}  ${'gzipped'.padStart(9)}  ${measureImport ? `import (median of ${runs})` : ''}`;
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const row of rows) {
    const timing = row.error ? `FAILED: ${row.error}` : row.ms !== undefined ? `${row.ms.toFixed(0)} ms` : '';
    console.log(
      `${row.id.padEnd(width)}  ${row.kind.padEnd(6)}  ${kb(row.bytes).padStart(10)}  ${kb(row.gzipBytes).padStart(9)}  ${timing}`,
    );
  }
  console.log('-'.repeat(header.length));
  const heaviest = rows[0];
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  console.log(
    `${rows.length} functions, ${kb(total)} in all; heaviest: ${heaviest?.id} at ${kb(heaviest?.bytes ?? 0)} (limit ${kb(LIMIT_BYTES)})`,
  );
  const timed = rows.flatMap((row) => (row.ms === undefined ? [] : [row.ms]));
  if (timed.length > 0) {
    console.log(
      `import: ${Math.min(...timed).toFixed(0)}-${Math.max(...timed).toFixed(0)} ms, median ${median(timed).toFixed(0)} ms (Node ${process.versions.node} on this machine; Lambda's arm64 init differs)`,
    );
  }

  const failed = rows.filter((row) => row.error);
  if (failed.length > 0) {
    console.error(
      `\n${failed.length} bundle(s) cannot initialise with the environment the stack gives them: ${failed.map((row) => row.id).join(', ')}`,
    );
    process.exitCode = 1;
  }
  if ((heaviest?.bytes ?? 0) >= LIMIT_BYTES) {
    console.error(`\nThe heaviest bundle is over the ${kb(LIMIT_BYTES)} limit.`);
    process.exitCode = 1;
  }
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
