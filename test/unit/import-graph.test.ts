import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The import graph of shared/: every module and what it imports (type imports too), resolved to files. */
const ROOT = resolve(import.meta.dirname, '../..');
const SHARED = join(ROOT, 'shared');

const modules = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? modules(path) : path.endsWith('.ts') ? [path] : [];
  });

const fileOf = (path: string) =>
  [path, `${path}.ts`, join(path, 'index.ts')].find((candidate) => statSync(candidate, { throwIfNoEntry: false })?.isFile());

const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)].map(([, specifier = '']) => specifier);

const graph = new Map(
  modules(SHARED).map((file) => [
    file,
    importsOf(file).flatMap((specifier) => {
      const target = specifier.startsWith('#shared/')
        ? join(SHARED, specifier.slice('#shared/'.length))
        : specifier.startsWith('.')
          ? resolve(dirname(file), specifier)
          : undefined;
      const found = target && fileOf(target);
      return found ? [found] : [];
    }),
  ]),
);

/** Every circle of imports, as the modules around it. */
const circles = () => {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].map((each) => relative(ROOT, each)));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
};

describe('the import graph of shared/ and who calls the table', () => {
  it('has no circle: every module can be read, and tested, before the ones that use it', () => {
    // Act
    const found = circles();

    // Assess
    expect(found).toEqual([]);
  });

  it('imports nothing from the functions, the infrastructure, the local stack or the tools', () => {
    // Act
    const outward = [...graph.keys()].flatMap((file) =>
      importsOf(file)
        .filter((specifier) => /^#(functions|lib|local|scripts)\//.test(specifier))
        .map((specifier) => `${relative(ROOT, file)} -> ${specifier}`),
    );

    // Assess
    expect(outward).toEqual([]);
  });

  it('leaves every DynamoDB call to shared/db: outside it, no module builds a table command', () => {
    // Act
    const FUNCTIONS = join(ROOT, 'functions');
    const outside = [...modules(SHARED), ...modules(FUNCTIONS)]
      .filter((file) => !file.startsWith(join(SHARED, 'db')))
      .filter((file) =>
        /new (Get|Put|Update|Delete|Query|Scan|BatchGet|BatchWrite|TransactWrite|TransactGet)Command\(/.test(readFileSync(file, 'utf8')),
      )
      .map((file) => relative(ROOT, file));

    // Assess
    expect(outside).toEqual([]);
  });
});
