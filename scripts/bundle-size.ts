/** `npm run bundle-size`: every function bundled as the stack does (lib/bundling.ts), its size and cold start (USAGE below). */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { functionSpecs } from '#lib/function-specs';
import { bundleFunction, COLD_START_BUDGET, type ImportTimes, importBundle, MAX_BUNDLE_BYTES } from './bundles';

const USAGE = `usage: npm run bundle-size [-- --runs N] [-- --no-import]

Bundles every function as the stack does; prints minified and gzipped size and the cold start,
median of --runs (default 20): CPU time of the import, its wall time, and the init from process
start to handler ready. Fails when a function's import CPU is over the budget
(${COLD_START_BUDGET.importCpuMs} ms), a bundle is over ${MAX_BUNDLE_BYTES / 1024} KB, or a bundle cannot initialise with its own environment.
  --runs N      samples per function (default 20)
  --no-import   sizes only (no budget check)`;

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    'no-import': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const runs = Math.max(1, Number(values.runs) || 20);
const measureImport = !values['no-import'];

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

type Row = { id: string; kind: string; bytes: number; gzipBytes: number; error?: string } & Partial<ImportTimes>;

const outDir = mkdtempSync(join(tmpdir(), 'merchant-api-bundles-'));
try {
  const bundles = await Promise.all(functionSpecs().map((spec) => bundleFunction(spec, outDir)));
  const rows: Row[] = [];
  for (const bundle of bundles) {
    const row: Row = { id: bundle.spec.id, kind: bundle.spec.kind, bytes: bundle.bytes, gzipBytes: bundle.gzipBytes };
    if (measureImport) {
      const samples: ImportTimes[] = [];
      for (let index = 0; index < runs && !row.error; index++) {
        const result = await importBundle(bundle);
        if (result.ok) samples.push(result);
        else row.error = result.error;
      }
      if (!row.error)
        for (const figure of ['importCpuMs', 'importMs', 'initMs'] as const) row[figure] = median(samples.map((sample) => sample[figure]));
    }
    rows.push(row);
  }
  rows.sort((a, b) => b.bytes - a.bytes);

  const width = Math.max(...rows.map((row) => row.id.length), 'function'.length);
  const header = `${'function'.padEnd(width)}  ${'kind'.padEnd(6)}  ${'minified'.padStart(10)}  ${'gzipped'.padStart(9)}  ${measureImport ? `${'import CPU'.padStart(10)}  ${'import'.padStart(8)}  ${'init'.padStart(8)}  (median of ${runs})` : ''}`;
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const row of rows) {
    const timing = row.error
      ? `FAILED: ${row.error}`
      : row.initMs !== undefined
        ? `${`${row.importCpuMs?.toFixed(0)} ms`.padStart(10)}  ${`${row.importMs?.toFixed(0)} ms`.padStart(8)}  ${`${row.initMs.toFixed(0)} ms`.padStart(8)}`
        : '';
    console.log(
      `${row.id.padEnd(width)}  ${row.kind.padEnd(6)}  ${kb(row.bytes).padStart(10)}  ${kb(row.gzipBytes).padStart(9)}  ${timing}`,
    );
  }
  console.log('-'.repeat(header.length));
  const heaviest = rows[0];
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  console.log(
    `${rows.length} functions, ${kb(total)} in all; heaviest: ${heaviest?.id} at ${kb(heaviest?.bytes ?? 0)} (ceiling ${kb(MAX_BUNDLE_BYTES)})`,
  );
  const timed = rows.filter((row) => row.importCpuMs !== undefined) as Required<Row>[];
  if (timed.length > 0) {
    const range = (pick: (row: Required<Row>) => number) =>
      `${Math.min(...timed.map(pick)).toFixed(0)}-${Math.max(...timed.map(pick)).toFixed(0)} ms`;
    console.log(
      `import CPU ${range((row) => row.importCpuMs)}, import ${range((row) => row.importMs)}, init ${range((row) => row.initMs)}; ` +
        `budget ${COLD_START_BUDGET.importCpuMs} ms import CPU (heaviest bundle ${kb(COLD_START_BUDGET.heaviestBytes)} when set)`,
    );
    console.log(
      `machine: ${cpus()[0]?.model ?? 'unknown cpu'}, ${cpus().length} cores, load ${loadavg()[0]?.toFixed(1)}, Node ${process.versions.node} ${process.arch}`,
    );
    const over = timed.filter((row) => row.importCpuMs > COLD_START_BUDGET.importCpuMs);
    if (over.length > 0) {
      console.error(
        `\nOver the cold-start budget of ${COLD_START_BUDGET.importCpuMs} ms import CPU: ${over.map((row) => `${row.id} ${row.importCpuMs.toFixed(0)} ms`).join(', ')}`,
      );
      process.exitCode = 1;
    }
  }

  const failed = rows.filter((row) => row.error);
  if (failed.length > 0) {
    console.error(
      `\n${failed.length} bundle(s) cannot initialise with the environment the stack gives them: ${failed.map((row) => row.id).join(', ')}`,
    );
    process.exitCode = 1;
  }
  if ((heaviest?.bytes ?? 0) >= MAX_BUNDLE_BYTES) {
    console.error(`\nThe heaviest bundle is over the ${kb(MAX_BUNDLE_BYTES)} ceiling.`);
    process.exitCode = 1;
  }
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
