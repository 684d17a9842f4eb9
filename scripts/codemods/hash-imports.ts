/**
 * Codemod: `../`-relative imports become `#` subpath imports (package.json `imports`), e.g.
 * `../../shared/http/api-handler` -> `#shared/http/api-handler`. Imports within a folder (`./x`)
 * stay relative. Re-runnable: run it again after merging a branch that adds relative imports.
 *
 *   npx tsx scripts/codemods/hash-imports.ts          # rewrite the tree (files git knows, .ts)
 *   npx tsx scripts/codemods/hash-imports.ts --check  # list what it would change; exit 1 if anything
 *
 * It rewrites static imports and exports (`from '...'`), `import('...')`, `vi.mock('...')` and
 * `vi.importActual('...')`, and keeps package.json `imports` holding one `#<folder>/*` entry per
 * top-level folder that is imported this way.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');
const check = process.argv.includes('--check');

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.mts'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file !== '' && existsSync(resolve(ROOT, file)));

/** The file a relative specifier names (with or without its extension), or undefined. */
const targetOf = (fromFile: string, specifier: string): string | undefined => {
  const base = resolve(dirname(fromFile), specifier);
  return [base, `${base}.ts`, `${base}.mts`].find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
};

const SPECIFIER = /(\bfrom\s+|\bimport\s*\(\s*|\bvi\.mock\(\s*|\bvi\.importActual(?:<[^>]*>)?\(\s*)(['"])(\.\.\/[^'"]+)\2/g;
const folders = new Set<string>();
let changedFiles = 0;
let changedImports = 0;

for (const file of files) {
  const path = resolve(ROOT, file);
  const text = readFileSync(path, 'utf8');
  const next = text.replace(SPECIFIER, (match, lead: string, quote: string, specifier: string) => {
    const target = targetOf(path, specifier);
    if (!target) return match;
    const inRepo = relative(ROOT, target).split(sep).join('/');
    if (inRepo.startsWith('..') || inRepo.startsWith('node_modules/')) return match;
    const [folder] = inRepo.split('/');
    if (!folder || folder === inRepo) return match; // a file at the root: leave it relative
    folders.add(folder);
    changedImports++;
    const withoutExtension = specifier.endsWith('.ts') || specifier.endsWith('.mts') ? inRepo : inRepo.replace(/\.m?ts$/, '');
    return `${lead}${quote}#${withoutExtension}${quote}`;
  });
  if (next === text) continue;
  changedFiles++;
  if (check) console.log(file);
  else writeFileSync(path, next);
}

// Every `#<folder>/*` used in the tree (now or by an earlier run) needs its package.json entry.
for (const file of files) {
  for (const [, folder] of readFileSync(resolve(ROOT, file), 'utf8').matchAll(/['"]#([\w-]+)\//g)) if (folder) folders.add(folder);
}
const packagePath = resolve(ROOT, 'package.json');
const pkg = JSON.parse(readFileSync(packagePath, 'utf8')) as { imports?: Record<string, string> };
const imports = { ...pkg.imports };
for (const folder of [...folders].sort()) imports[`#${folder}/*`] ??= `./${folder}/*.ts`;
const sortedImports = Object.fromEntries(Object.entries(imports).sort(([a], [b]) => a.localeCompare(b)));
const packageChanged = JSON.stringify(sortedImports) !== JSON.stringify(pkg.imports ?? {});
if (packageChanged && !check) {
  // `imports` goes right after `engines` (or at the end), the rest of package.json as it was.
  const entries = Object.entries(pkg).filter(([key]) => key !== 'imports');
  const at = entries.findIndex(([key]) => key === 'engines');
  entries.splice(at === -1 ? entries.length : at + 1, 0, ['imports', sortedImports]);
  writeFileSync(packagePath, `${JSON.stringify(Object.fromEntries(entries), null, 2)}\n`);
}

console.log(
  `${check ? 'would rewrite' : 'rewrote'} ${changedImports} import(s) in ${changedFiles} file(s)${packageChanged ? '; package.json imports updated' : ''}`,
);
if (check && (changedFiles > 0 || packageChanged)) process.exit(1);
